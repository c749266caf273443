-- ---- the outbox: discoveries handed to other partitions ----

-- outbox_write files, in the call's partition, the discoveries of the held
-- completions that belong to other partitions (partition_outbox.go): nob
-- triples of ARGV from `from` on, each (completion index, entry id,
-- payload); those of completion k are kept when kept[k]. An entry id names
-- its target partition and the call ("<q>/<nonce>"); its payloads are
-- joined into one value of obx, and ob holds the id with now as its score
-- (a drain looks for the entries older than a grace). Written in the
-- completion's own call: both survive a failover, or neither does.
-- Cost: O(nob + bytes): one HSET and one ZADD per entry.
local function outbox_write(kept, from, nob)
  local parts, order = {}, {}
  for j = from, from + 3 * (nob - 1), 3 do
    if kept[tonum(ARGV[j])] then
      local id = ARGV[j + 1]
      local p = parts[id]
      if not p then
        p = {}
        parts[id] = p
        order[#order + 1] = id
      end
      p[#p + 1] = ARGV[j + 2]
    end
  end
  if #order == 0 then return end
  local ob, obx = crawl_key('outbox'), crawl_key('outbox_items')
  for _, id in ipairs(order) do
    rcall('HSET', obx, id, table.concat(parts[id]))
    rcall('ZADD', ob, ARGV[2], id)
  end
end
