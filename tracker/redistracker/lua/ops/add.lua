-- add.lua: add items not seen before.
-- KEYS: the fixed keys (codes.lua): pending, stats, fpmeta, crawl are used.
-- ARGV: the common 1-5 (codes.lua); 6 the crawl id seen ('' for none), 7 a fresh id for a
--   new crawl record (check_crawl); then per item 3 values, as add_item
--   takes them: a, b (an ID below 2^40 and '', or a fingerprint's x in hex
--   and its member), entry.
-- Returns {the number of new items, the crawl id}, or STATE_LOST.
-- Cost: O(items); a bucket split now and then moves <= 512 members.
local ARGV = ARGV -- a register, not the library's upvalue, in the per-item loop
local id = check_crawl(ARGV[6], ARGV[7], true)
if not id then return redis.error_reply(STATE_LOST) end
local new = 0
for i = 8, #ARGV, 3 do
  new = new + add_item(ARGV[i], ARGV[i + 1], ARGV[i + 2])
end
added(new)
flush()
return {new, id}
