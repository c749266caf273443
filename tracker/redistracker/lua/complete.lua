-- complete.lua: mark held leases done and add the items discovered in them,
-- atomically: a lost lease changes nothing and its discoveries are dropped.
-- KEYS: lib.lua's 1-10.
-- ARGV: lib.lua's 1-5; then per completion: token, key, bytes
--   (tracker.Completion.Bytes, counted in stats' bytes), m (discoveries),
--   then m × (kind, a, b, entry) as in add.lua.
-- Returns the keys of the lost leases.
-- Cost: O(completions + discoveries).
local lost = {}
-- First pass: read every lease record in one HMGET.
local toks = {}
local i = 6
while i <= #ARGV do
  toks[#toks + 1] = ARGV[i]
  i = i + 4 + tonumber(ARGV[i + 3]) * 4
end
for c = 1, #toks, 1000 do
  local d = math.min(c + 999, #toks)
  local recs = redis.call('HMGET', K_LEASE, unpack(toks, c, d))
  for k = c, d do REC[toks[k]] = recs[k - c + 1] end
end
i = 6
while i <= #ARGV do
  local token, key, bytes, m = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
  i = i + 4
  local l = held(token, key)
  if l then
    drop_lease(token, l.worker)
    worker_count(l.worker, 'done', 1)
    D.done = D.done + 1
    D.bytes = D.bytes + bytes
    for j = i, i + (m - 1) * 4, 4 do
      add_item(ARGV[j], ARGV[j + 1], ARGV[j + 2], ARGV[j + 3])
    end
  else
    lost[#lost + 1] = key
  end
  i = i + m * 4
end
flush()
return lost
