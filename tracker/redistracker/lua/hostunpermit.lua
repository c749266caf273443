-- hostunpermit.lua: give back permits hostpermit.lua took (those that did
-- not ride on a later hostpermit call).
--
-- KEYS[i]  <prefix>conc:<host>   zset: permit id -> expiry (hostpermit.lua)
-- ARGV     lib.lua's 1-5 (unused); 5+i the id of the permit given back in KEYS[i]
-- Returns  how many permits were held (the others had expired, or were never taken).
-- Cost     O(permits × log n), n <= the host's limit.
local n = 0
for i = 1, #KEYS do n = n + redis.call('ZREM', KEYS[i], ARGV[5 + i]) end
return n
