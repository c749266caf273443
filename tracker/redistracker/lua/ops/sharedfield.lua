-- sharedfield.lua: tracker.SharedStore's PutField: set one field of a name
-- (a cookie of the fleet's jar) for a ttl; each field expires on its own.
-- A new field past the most a name holds is refused, after the expired
-- fields are dropped. Bare: it uses nothing of the per-call state.
--
-- KEYS[1]  <prefix>sharedf:<name>  hash field -> "<expires ms>:<value>" (keys.go)
-- ARGV     the common 1-5 (codes.lua; 2 is now, ms of the tracker's clock);
--          6 the field; 7 its value, "<expires ms>:<value>"; 8 expires, ms;
--          9 the ttl, ms; 10 the most fields of a name
--          (tracker.MaxSharedFields)
-- Returns  SHARED_SET when the field was stored; SHARED_FULL when it is a new
--          field and the name holds ARGV[10] live fields (nothing written).
-- Cost     O(1); O(fields) once a name is full (it drops the expired ones).
-- Clock    as sharedput.lua. The hash expires (cleanup only) with its field
--          that lasts longest: its PEXPIREAT only moves later.
local max = tonumber(ARGV[10])
if redis.call('HEXISTS', KEYS[1], ARGV[6]) == 0 and redis.call('HLEN', KEYS[1]) >= max then
  local now = tonumber(ARGV[2])
  local kv = redis.call('HGETALL', KEYS[1])
  for i = 1, #kv, 2 do
    local exp = shared_expires(kv[i + 1])
    if exp and exp <= now then redis.call('HDEL', KEYS[1], kv[i]) end
  end
  if redis.call('HLEN', KEYS[1]) >= max then return SHARED_FULL end
end
redis.call('HSET', KEYS[1], ARGV[6], ARGV[7])
local clean = shared_cleanup(tonumber(ARGV[8]), tonumber(ARGV[9]))
if redis.call('PEXPIRETIME', KEYS[1]) < clean then
  redis.call('PEXPIREAT', KEYS[1], string.format('%d', clean))
end
return SHARED_SET
