-- hostunpermit.lua: give back permits hostpermit.lua took.
--
-- KEYS[1]  <prefix>conc:<host>   zset: permit id -> expiry (hostpermit.lua)
-- ARGV     the common 1-5 (codes.lua) (unused); 6... permit ids
-- Returns  how many were held (the others had expired, or were never taken).
-- Cost     O(ids × log limit).
return redis.call('ZREM', KEYS[1], unpack(ARGV, 6))
