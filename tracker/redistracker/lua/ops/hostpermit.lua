-- hostpermit.lua: take one of a host's permits for the whole fleet, so N
-- workers together keep at most `limit` requests in flight to the host
-- (fetch.per_host_concurrency), not N times it. A permit expires on its own:
-- a killed worker's permits come back after their ttl. Standalone (redis.go):
-- it uses nothing of the library, and its function skips the library's per-call
-- begin: it is a one-call-per-request operation, not a life-cycle one.
--
-- KEYS[1]  <prefix>conc:<host>   zset: permit id -> expiry, µs of the Redis clock
-- ARGV     the common 1-5 (codes.lua) (unused: the clock is Redis's, see Clock below);
--          6 permit id (unique per request: the worker's random id and a counter);
--          7 limit (>= 1); 8 ttl µs (> 0): how long the permit may be held
-- Returns  {1, 0} when the permit was taken (release it with
--          hostunpermit.lua); {0, µs until the soonest permit expires} when
--          all `limit` are held (the caller retries sooner if one is released).
-- Cost     O(log n + expired) with n <= limit permits in the set. The key
--          expires with its last permit.
-- Clock    the Redis server's (TIME), not the workers': expiries are compared
--          on one clock.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local limit = tonumber(ARGV[7])
local ttl = tonumber(ARGV[8])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= limit then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, tonumber(first[2]) - now}
end
redis.call('ZADD', KEYS[1], string.format('%d', now + ttl), ARGV[6])
-- The set lives as long as its longest permit (workers may use different
-- ttls: never shorten it under another holder).
local keep = math.floor(ttl / 1000) + 1000
if redis.call('PTTL', KEYS[1]) < keep then
  redis.call('PEXPIRE', KEYS[1], keep)
end
return {1, 0}
