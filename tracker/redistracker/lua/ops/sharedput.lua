-- sharedput.lua: tracker.SharedStore's Put: set a name's value for a ttl,
-- replacing what it held. Bare: it uses nothing of the per-call state.
--
-- KEYS[1]  <prefix>shared:<name>  string "<expires ms>:<value>" (keys.go)
-- ARGV     the common 1-5 (codes.lua); 6 the value, "<expires ms>:<value>"
--          (Go encodes it: redis_shared.go); 7 expires, ms of the tracker's
--          clock; 8 the ttl, ms
-- Returns  SHARED_SET.
-- Cost     O(1).
-- Clock    the value expires by the tracker's clock (Options.Clock): readers
--          compare its expires with their now. The key's PEXPIREAT only
--          cleans up (lua/lib/shared.lua: shared_cleanup).
local clean = shared_cleanup(tonumber(ARGV[7]), tonumber(ARGV[8]))
redis.call('SET', KEYS[1], ARGV[6], 'PXAT', string.format('%d', clean))
return SHARED_SET
