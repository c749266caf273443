-- addrange.lua: add a range of numeric IDs as one pending entry; its IDs are
-- deduplicated when checkout carves them.
-- KEYS: 1 pending, 8 stats, 10 crawl.
-- ARGV: lib.lua's 1-5; 6 the entry (TAG_RANGE or TAG_HUGE_RANGE, "lo:hi"), 7 its length
--   (decimal, exact: it goes to HINCRBY as a string); 8 the crawl id seen,
--   9 a fresh id (as in add.lua).
-- Returns the crawl id, or STATE_LOST. Cost: O(1) in time and memory,
--   whatever the range's length.
local id = check_crawl(ARGV[8], ARGV[9], true)
if not id then return redis.error_reply(STATE_LOST) end
redis.call('RPUSH', K_PENDING, ARGV[6])
redis.call('HINCRBY', K_STATS, 'pending', ARGV[7])
redis.call('HINCRBY', K_STATS, 'added', ARGV[7])
return id
