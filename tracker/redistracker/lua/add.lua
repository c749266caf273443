-- add.lua: add items not seen before.
-- KEYS: 1 pending, 8 stats, 9 fpmeta (all of lib.lua's 1-9 are passed).
-- ARGV: lib.lua's 1-5; then per item 4 values: kind (KIND_ID: ID < 2^40 | KIND_FP:
--   fingerprint), a (the ID | the fingerprint's x), b ('' | its member), entry.
-- Returns the number of new items.
-- Cost: O(items); a bucket split now and then moves <= 512 members.
local new = 0
for i = 6, #ARGV, 4 do
  new = new + add_item(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3])
end
flush()
return new
