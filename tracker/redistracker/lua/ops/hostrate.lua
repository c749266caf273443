-- hostrate.lua: book the next request slot of one host for the whole fleet.
-- One "next free slot" time per host (GCRA), so N workers together keep one
-- per-host rate instead of N times it. Standalone (redis.go): it uses
-- nothing of the library, and its function skips the library's per-call begin: it is
-- a one-call-per-request operation, not a life-cycle one.
--
-- KEYS[1]  <prefix>rate:<host>   string: the host's next free slot, µs of the Redis clock
-- ARGV     the common 1-5 (codes.lua) (unused: NOW is the worker's clock, see Clock below);
--          6 interval between two requests to the host, µs (> 0);
--          7 the longest wait worth booking, µs
-- Returns  {wait µs, booked (0|1)}: the caller sleeps wait, then sends; a wait
--          longer than ARGV[2] books nothing (the caller retries the item later).
-- Cost     O(1). The key expires once its slot is in the past.
-- Clock    the Redis server's (TIME), not the workers': their clocks may
--          disagree, and the spacing must be measured on one clock.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[6])
local maxwait = tonumber(ARGV[7])
local nextfree = tonumber(redis.call('GET', KEYS[1]) or '0')
if nextfree < now then
  nextfree = now
end
local wait = nextfree - now
if wait > maxwait then
  return {wait, 0}
end
redis.call('SET', KEYS[1], string.format('%d', nextfree + interval),
  'PX', math.floor((wait + interval) / 1000) + 1000)
return {wait, 1}
