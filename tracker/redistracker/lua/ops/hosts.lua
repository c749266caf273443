-- hosts.lua: the bounded samples Inspector.Hosts counts per host (the
-- caller parses the hosts out of them).
-- KEYS: the fixed keys (codes.lua).
-- ARGV: the common 1-5 (codes.lua); 6 sample size.
-- Returns {pending entries (the first `sample` in checkout's order: the
--   highest priority level first), leases in flight, lease records (all of
--   them up to `sample`, else `sample` random ones), the keys of the
--   `sample` most recent dead letters}.
-- Cost: O(sample); it writes nothing.
local s = tonumber(ARGV[6])
local pend = {}
local levels = rcall('HMGET', K.stats, 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9')
for p = 9, 0, -1 do
  if #pend >= s then break end
  if p == 0 or tonumber(levels[p] or '0') > 0 then
    for _, e in ipairs(rcall('LRANGE', level_key(p), '0', itoa(s - #pend - 1))) do pend[#pend + 1] = e end
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
