-- stats.lua: the crawl's counters, read in one consistent snapshot.
-- KEYS: 4 workers, 8 stats.
-- ARGV: lib.lua's 1-5.
-- Returns {pending, leased, delayed, done, failed, added, workers, next due}
-- as strings; next due is the first delayed entry's due time (ms), 0 if none.
-- Cost: O(log(workers) + log(delayed)): counters are maintained by the other
-- scripts, and the delayed zset's first entry is read without a scan.
local v = redis.call('HMGET', K_STATS, unpack(STAT_FIELDS))
local out = {}
for i = 1, #STAT_FIELDS do out[i] = v[i] or '0' end
out[#out + 1] = tostring(redis.call('ZCOUNT', K_WORKERS, '(' .. ARGV[2], '+inf'))
local first = redis.call('ZRANGE', K_DELAYED, 0, 0, 'WITHSCORES')
out[#out + 1] = first[2] or '0'
return out
