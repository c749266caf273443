-- hostpermit.lua: take up to n of a host's permits for the whole fleet, so
-- N workers together keep at most `limit` requests in flight to the host
-- (fetch.per_host_concurrency), not N times it. A worker takes a block of
-- permits in one call and reuses them for request after request (fetch's
-- permit pool), giving them back with hostunpermit.lua; a permit expires on
-- its own: a killed worker's come back after their ttl. Standalone
-- (redis.go): it uses nothing of the library, and its function skips the
-- library's per-call begin.
--
-- KEYS[1]  <prefix>conc:<host>   zset: permit id -> expiry, µs of the Redis clock
-- ARGV     the common 1-5 (codes.lua) (unused: the clock is Redis's, see Clock below);
--          6 block id (unique per call: the worker's random id and a
--          counter; the permits are "<block id>.<i>", i = 1..taken);
--          7 limit (>= 1); 8 ttl µs (> 0): how long a permit may be held;
--          9 n (>= 1): permits wanted
-- Returns  {taken, 0} when it took 1 <= taken <= n permits (as many as are
--          free); {0, µs until the soonest permit expires} when all `limit`
--          are held (the caller retries sooner if one is given back).
-- Cost     O(taken × log limit + expired), at most `limit` permits in the set.
--          The key expires with its longest permit.
-- Clock    the Redis server's (TIME), not the workers': expiries are compared
--          on one clock.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local limit = tonumber(ARGV[7])
local ttl = tonumber(ARGV[8])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local free = limit - redis.call('ZCARD', KEYS[1])
if free <= 0 then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, tonumber(first[2]) - now}
end
local n = math.min(tonumber(ARGV[9]), free)
local exp = string.format('%d', now + ttl)
local z = {}
for i = 1, n do
  z[2 * i - 1] = exp
  z[2 * i] = ARGV[6] .. '.' .. i
end
redis.call('ZADD', KEYS[1], unpack(z))
-- The set lives as long as its longest permit (workers may use different
-- ttls: never shorten it under another holder).
local keep = math.floor(ttl / 1000) + 1000
if redis.call('PTTL', KEYS[1]) < keep then
  redis.call('PEXPIRE', KEYS[1], keep)
end
return {n, 0}
