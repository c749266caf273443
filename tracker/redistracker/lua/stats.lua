-- stats.lua: the crawl's counters, read in one consistent snapshot.
-- KEYS: 4 workers, 8 stats.
-- ARGV: lib.lua's 1-5.
-- Returns {pending, leased, delayed, done, failed, added, workers} as strings.
-- Cost: O(log(workers)): counters are maintained by the other scripts.
local v = redis.call('HMGET', K_STATS, unpack(STAT_FIELDS))
local out = {}
for i = 1, #STAT_FIELDS do out[i] = v[i] or '0' end
out[#out + 1] = tostring(redis.call('ZCOUNT', K_WORKERS, '(' .. ARGV[2], '+inf'))
return out
