-- defer.lua: hand held leases back unstarted because their host is not
-- ready (tracker.Deferrer): each goes to the head of its host's queue, the
-- attempt given back (as release.lua), and its host is not handed out
-- before the deferral's end; a positive interval becomes the host's own
-- (hpace: lua/lib/hosts.lua).
-- KEYS: the fixed keys (codes.lua).
-- ARGV: the common 1-5 (codes.lua); then per lease 4 values: token, key,
--   until (ms), interval per egress (ms; 0 leaves it).
-- Returns the keys of the lost leases.
-- Cost: O(leases × log hosts).
local lost = {}
prefetch(6, 4)
for i = 6, #ARGV, 4 do
  local l = held(ARGV[i], ARGV[i + 1])
  if l then
    drop_lease(ARGV[i], l.worker)
    pend(l.hdr .. entry(l.key, l.depth, l.attempts - 1, l.meta), l.meta and l.meta.p or 0, true)
    lmove(l.meta, 'leased', 'pending')
    host_hold(host_of(l.key), tonum(ARGV[i + 2]), tonum(ARGV[i + 3]))
  else
    lost[#lost + 1] = ARGV[i + 1]
  end
end
flush()
return lost
