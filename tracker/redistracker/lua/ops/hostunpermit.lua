-- hostunpermit.lua: give back a permit hostpermit.lua took.
--
-- KEYS[1]  <prefix>conc:<host>   zset: permit id -> expiry (hostpermit.lua)
-- ARGV     the common 1-5 (codes.lua) (unused); 6 permit id
-- Returns  1 if the permit was held, 0 if it had expired (or was never taken).
-- Cost     O(log n), n <= the host's limit.
return redis.call('ZREM', KEYS[1], ARGV[6])
