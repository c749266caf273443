-- stats.lua: the crawl's counters, read in one consistent snapshot.
-- KEYS: the fixed keys (codes.lua): workers, delayed, stats, crawl; the
--   derived revisits and paused.
-- ARGV: the common 1-5 (codes.lua); 6 the crawl id seen ('' for none).
-- Returns {pending, leased, delayed, done, failed, added, bytes, revisits,
--   unchanged, rvids, workers, next due, crawl id, paused ("<ms>:<by>" or '')}
--   as strings; next due is the first delayed entry's or revisit's due time
--   (ms), 0 if none. STATE_LOST when the crawl's state vanished (Done reads
--   these counters: all zero then must not pass for a finished crawl). It
--   writes nothing.
-- Cost: O(log(workers) + log(delayed) + log(revisit seconds)): counters are maintained by the other
-- scripts, and the delayed zset's first entry is read without a scan.
local id = rcall('GET', K.crawl)
if ARGV[6] ~= '' and id ~= ARGV[6] then return redis.error_reply(STATE_LOST) end
local v = rcall('HMGET', K.stats, unpack(STAT_FIELDS))
local out = {}
for i = 1, #STAT_FIELDS do out[i] = v[i] or '0' end
out[#out + 1] = tostring(rcall('ZCOUNT', K.workers, '(' .. ARGV[2], '+inf'))
local first = rcall('ZRANGE', K.delayed, '0', '0', 'WITHSCORES')
local rv = rcall('ZRANGE', K.revisits, '0', '0', 'WITHSCORES')
local due = first[2]
if rv[2] and (not due or tonumber(rv[2]) < tonumber(due)) then due = rv[2] end
out[#out + 1] = due or '0'
out[#out + 1] = id or ''
out[#out + 1] = rcall('GET', K.paused) or ''
return out
