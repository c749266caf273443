-- outboxdone.lua: drop outbox entries whose discoveries their target
-- partition confirmed (partition_outbox.go): idempotent, an entry already
-- dropped by another drainer is skipped.
-- KEYS: 1 the partition's ob zset, 2 its obx hash.
-- ARGV: the common 1-5 (unused: a bare function); 6.. the entry ids.
-- Returns the number of entries dropped.
-- Cost: O(ids · log entries).
local n = 0
for i = 6, #ARGV do
  if redis.call('ZREM', KEYS[1], ARGV[i]) == 1 then n = n + 1 end
  redis.call('HDEL', KEYS[2], ARGV[i])
end
return n
