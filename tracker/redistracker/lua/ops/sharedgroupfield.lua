-- sharedgroupfield.lua: tracker.SharedFieldLog's PutGroupField: set one
-- field of a name (a cookie of the fleet's jar) in a group (its domain)
-- for a ttl, within a bound per group and per name, and log it under the
-- name's next version for FieldsSince. Bare: it uses nothing of the
-- per-call state.
--
-- KEYS[1]  <prefix>sharedf:<name>          hash field -> "<expires ms>:<value>"
-- KEYS[2]  <prefix>sharedx:<name>          zset "<group>\0<field>" -> expires
-- KEYS[3]  <prefix>sharedg:<name>\0<group> zset field -> expires (this group)
-- KEYS[4]  <prefix>sharedl:<name>          zset field -> the version it was put at
-- KEYS[5]  <prefix>sharedv:<name>          string: the name's version
-- ARGV     the common 1-5 (codes.lua; 2 is now, ms of the tracker's clock);
--          6 the field; 7 its value, "<expires ms>:<value>"; 8 expires, ms;
--          9 the ttl, ms; 10 the most fields of a name
--          (tracker.MaxSharedFields); 11 the group; 12 the most fields of a
--          group; 13 KEYS[3] without the group (for another group's key)
-- Returns  SHARED_SET.
-- Cost     O(log n): at most 8 expired fields dropped a call (by the
--          expiry index, never a scan), and a new field past a bound
--          replaces the group's (or name's) field that expires first.
-- Clock    as sharedput.lua. Every key expires (cleanup only) with the
--          name's field that lasts longest: PEXPIREAT only moves later. The
--          version starts at the first put's ms × 1000, so it grows across
--          a name emptied and set again.
local hash, xidx, gidx, log, ver = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local field, group, now = ARGV[6], ARGV[11], tonumber(ARGV[2])

-- drop removes the field "<group>\0<field>" m from every key of the name.
local function drop(m)
  local sep = string.find(m, '\0', 1, true)
  if not sep then redis.call('ZREM', xidx, m) return end
  local f = string.sub(m, sep + 1)
  redis.call('HDEL', hash, f)
  redis.call('ZREM', xidx, m)
  redis.call('ZREM', ARGV[13] .. string.sub(m, 1, sep - 1), f)
  redis.call('ZREM', log, f)
end

for _, m in ipairs(redis.call('ZRANGE', xidx, '-inf', string.format('%d', now), 'BYSCORE', 'LIMIT', 0, 8)) do
  drop(m)
end
if redis.call('HEXISTS', hash, field) == 0 then
  if redis.call('ZCARD', gidx) >= tonumber(ARGV[12]) then
    local first = redis.call('ZRANGE', gidx, 0, 0)[1]
    if first then drop(group .. '\0' .. first) end
  end
  if redis.call('HLEN', hash) >= tonumber(ARGV[10]) then
    local first = redis.call('ZRANGE', xidx, 0, 0)[1]
    if first then drop(first) end
  end
end
local expires = ARGV[8]
redis.call('HSET', hash, field, ARGV[7])
redis.call('ZADD', xidx, expires, group .. '\0' .. field)
redis.call('ZADD', gidx, expires, field)
if redis.call('EXISTS', ver) == 0 then
  local t = redis.call('TIME')
  redis.call('SET', ver, string.format('%d', tonumber(t[1]) * 1000000 + math.floor(tonumber(t[2]) / 1000)))
end
local v = redis.call('INCR', ver)
redis.call('ZADD', log, v, field)
local clean = shared_cleanup(tonumber(expires), tonumber(ARGV[9]))
for _, k in ipairs({hash, xidx, gidx, log, ver}) do
  if redis.call('PEXPIRETIME', k) < clean then
    redis.call('PEXPIREAT', k, string.format('%d', clean))
  end
end
return SHARED_SET
