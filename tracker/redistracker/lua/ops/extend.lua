-- extend.lua: push the deadline of held leases to now + ttl.
-- KEYS: the fixed keys (codes.lua): lease, workers; the derived deadlines, lg, and w:<worker> of the leases'
--   workers (their records, the library's seen_worker).
-- ARGV: the common 1-5 (codes.lua); 6 ttl (ms); then pairs (token, key).
-- Returns one flag per pair: 1 extended, 0 lost.
-- A group (the library's lease groups) whose live leases are all extended moves
--   as one entry; otherwise the extended ones get entries of their own and
--   the group is marked split.
-- Cost: O(leases + their groups + their workers × log(workers)).
local deadline = itoa(C.now + tonumber(ARGV[6]))
local res, workers, groups = {}, {}, {}
prefetch(7, 2)
for i = 7, #ARGV, 2 do
  local l = held(ARGV[i], ARGV[i + 1])
  if l then
    local g = group_of(ARGV[i])
    local toks = groups[g]
    if not toks then
      toks = {}
      groups[g] = toks
    end
    toks[#toks + 1] = ARGV[i]
    workers[l.worker] = true
    res[#res + 1] = 1
  else
    res[#res + 1] = 0
  end
end
for g, toks in pairs(groups) do
  local live = tonumber(rcall('HGET', K.lease_groups, g) or '-1') -- -1: no group, tokens of their own
  if live >= 0 and live < SPLIT and live == #toks then
    rcall('ZADD', K.deadlines, 'XX', deadline, g)
  else
    local zargs = {}
    for _, t in ipairs(toks) do
      zargs[#zargs + 1] = deadline
      zargs[#zargs + 1] = t
    end
    call_multi('ZADD', K.deadlines, zargs, 1000)
    if live >= 0 and live < SPLIT then rcall('HINCRBY', K.lease_groups, g, itoa(SPLIT)) end
  end
end
for w in pairs(workers) do seen_worker(w, tonumber(ARGV[6]), 0) end
return res
