-- sharedclaim.lua: tracker.SharedStore's Claim: set a name's value for a ttl
-- only when it holds no live value. A SET NX alone would not do: a value
-- expired by the tracker's clock may still be in Redis (its key expires
-- later, for cleanup only), and it must not hold the name. Bare: it uses
-- nothing of the per-call state.
--
-- KEYS[1]  <prefix>shared:<name>  string "<expires ms>:<value>" (keys.go)
-- ARGV     the common 1-5 (codes.lua; 2 is now, ms of the tracker's clock);
--          6 the value, "<expires ms>:<value>"; 7 expires, ms; 8 the ttl, ms
-- Returns  SHARED_SET when this call set the value, SHARED_HELD when the name
--          holds a value that expires after now (nothing written); an error
--          when the key holds no "<expires ms>:" (nothing written).
-- Cost     O(1).
-- Clock    as sharedput.lua: expiry by the tracker's clock, PEXPIREAT for
--          cleanup only.
local cur = redis.call('GET', KEYS[1])
if cur then
  local exp = shared_expires(cur)
  if not exp then
    return redis.error_reply('ERR ' .. KEYS[1] .. ' holds no "<expires ms>:" prefix')
  end
  if exp > tonumber(ARGV[2]) then return SHARED_HELD end
end
local clean = shared_cleanup(tonumber(ARGV[7]), tonumber(ARGV[8]))
redis.call('SET', KEYS[1], ARGV[6], 'PXAT', string.format('%d', clean))
return SHARED_SET
