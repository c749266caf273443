-- release.lua: hand held leases back to the head of pending (their level's)
-- at once, giving the attempt back.
-- KEYS: the fixed keys (codes.lua): pending, lease, stats are used.
-- ARGV: the common 1-5 (codes.lua); then pairs (token, key).
-- Returns the keys of the lost leases.
-- Cost: O(leases).
local lost = {}
prefetch(6, 2)
for i = 6, #ARGV, 2 do
  local l = held(ARGV[i], ARGV[i + 1])
  if l then
    drop_lease(ARGV[i], l.worker)
    pend(l.hdr .. entry(l.key, l.depth, l.attempts - 1, l.meta), l.meta and l.meta.p or 0, true)
    lmove(l.meta, 'leased', 'pending')
  else
    lost[#lost + 1] = ARGV[i + 1]
  end
end
flush()
return lost
