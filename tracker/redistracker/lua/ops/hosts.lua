-- hosts.lua: the bounded samples Inspector.Hosts counts per host (the
-- caller parses the hosts out of the leases and dead letters).
-- KEYS: the fixed keys (codes.lua).
-- ARGV: the common 1-5 (codes.lua); 6 sample size.
-- Returns {pending (host, its entries) pairs for the first `sample` hosts
--   of each level's zset (lua/lib/hosts.lua), the soonest ready first,
--   leases in flight, lease records (all of them up to `sample`, else
--   `sample` random ones), the keys of the `sample` most recent dead
--   letters}.
-- Cost: O(sample × levels used); it writes nothing.
local s = tonumber(ARGV[6])
local pend = {}
for _, p in ipairs(levels_used()) do
  for _, h in ipairs(rcall('ZRANGE', hz_key(p), '0', itoa(s - 1))) do
    pend[#pend + 1] = h
    pend[#pend + 1] = rcall('LLEN', hq_key(h, p))
  end
end
local n = rcall('HLEN', K.lease)
local recs
if n <= s then
  recs = rcall('HVALS', K.lease)
else
  recs = {}
  local fv = rcall('HRANDFIELD', K.lease, itoa(s), 'WITHVALUES')
  for i = 2, #fv, 2 do recs[#recs + 1] = fv[i] end
end
return {pend, n, recs, rcall('ZRANGE', K.failed, '0', itoa(s - 1), 'REV')}
