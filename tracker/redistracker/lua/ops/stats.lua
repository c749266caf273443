-- stats.lua: the crawl's counters, read in one consistent snapshot.
-- KEYS: the fixed keys (codes.lua): workers, delayed, stats, crawl; the
--   derived revisits and paused.
-- ARGV: the common 1-5 (codes.lua); 6 the crawl id seen ('' for none).
-- Returns {pending, leased, delayed, done, failed, added, bytes, revisits,
--   unchanged, rvids, workers, next due, crawl id, paused ("<ms>:<by>" or ''),
--   hosts ready, hosts waiting, next host ready (ms, 0 if none)}
--   as strings; next due is the first delayed entry's or revisit's due time
--   (ms), 0 if none. STATE_LOST when the crawl's state vanished (Done reads
--   these counters: all zero then must not pass for a finished crawl). It
--   writes nothing.
-- Hosts: summed over the levels in use (lua/lib/hosts.lua), so a host with
--   items of two levels counts twice.
-- Cost: O(log(workers) + log(delayed) + log(revisit seconds) + levels ×
-- log(hosts)): counters are maintained by the other scripts, and the
-- zsets' counts and first entries are read without a scan.
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
local ready, waiting, first_ready = 0, 0, nil
for _, p in ipairs(levels_used()) do
  local z = hz_key(p)
  ready = ready + rcall('ZCOUNT', z, '-inf', ARGV[2])
  waiting = waiting + rcall('ZCOUNT', z, '(' .. ARGV[2], '+inf')
  local f = rcall('ZRANGEBYSCORE', z, '(' .. ARGV[2], '+inf', 'WITHSCORES', 'LIMIT', '0', '1')
  if f[2] and (not first_ready or tonumber(f[2]) < first_ready) then first_ready = tonumber(f[2]) end
end
out[#out + 1] = tostring(ready)
out[#out + 1] = tostring(waiting)
out[#out + 1] = first_ready and itoa(first_ready) or '0'
return out
