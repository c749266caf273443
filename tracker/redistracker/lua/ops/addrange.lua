-- addrange.lua: add ranges of numeric IDs, each as one pending entry; their
-- IDs are deduplicated when checkout carves them.
-- KEYS: the fixed keys (codes.lua): pending, stats, crawl are used; the
--   derived idranges.
-- ARGV: the common 1-5 (codes.lua); 6 the crawl id seen, 7 a fresh id (as in add.lua);
--   then per range 2 values: the entry (TAG_RANGE or TAG_HUGE_RANGE,
--   "lo:hi") and its length (decimal, exact: it goes to HINCRBY as a string).
-- Each range ("lo:hi") is also kept in the derived list idranges, for Recrawl.
-- Returns the crawl id, or STATE_LOST. Cost: O(ranges) in time and memory,
--   whatever their lengths.
local id = check_crawl(ARGV[6], ARGV[7], true)
if not id then return redis.error_reply(STATE_LOST) end
for i = 8, #ARGV, 2 do
  rcall('RPUSH', K.pending, ARGV[i])
  rcall('RPUSH', crawl_key('idranges'), string.sub(ARGV[i], 2)) -- for Recrawl: a handful per crawl
  rcall('HINCRBY', K.stats, 'pending', ARGV[i + 1])
  rcall('HINCRBY', K.stats, 'added', ARGV[i + 1])
end
return id
