-- ---- hosts: the schedule (tracker/hosts.go; keys.go names the keys) ----
-- A URL's entries wait in its host's queue, the list h:<host> for level 0
-- and h<p>:<host> for level p; the zset hosts (level 0), hosts<p> (level p)
-- holds the hosts with entries of that level, each scored by the host's
-- next slot (ms; 0: never booked), alike in every zset it is in; hidle
-- keeps the slot of a host with no entries while it is ahead; hpace a
-- host's own interval per egress (ms, from a deferral). Entries without a
-- host (IDs, runs and ranges, other keys) stay in pending and pending:<p>.
-- A host costs its list, one member per zset and, while idle, one in hidle
-- (docs/scale.md gives the bytes).

-- host_of is tracker.HostOf's twin (TestHostOfAgrees): a URL key's
-- host[:port], lower-case; '' for any other key.
local function host_of(key)
  local i = s_find(key, '://', 1, true)
  if not i or i == 1 then return '' end
  local h = s_match(key, '^[^/?#]*', i + 3)
  local at = s_match(h, '^.*()@')
  if at then h = s_sub(h, at + 1) end
  return string.lower(h)
end

-- entry_key is the key of a pending entry (after a revisit header); nil for
-- a run or a range of IDs.
local function entry_key(e)
  if s_byte(e, 1) == TAG_REVISIT then
    local _
    _, e = split_revisit(e)
  end
  local c = s_byte(e, 1)
  if c > TAG_MAX then return e end
  if c == TAG_ITEM then return s_match(e, '^.%d+:%d+:(.*)$') end
  if c == TAG_EXT or c == TAG_NAMED then return (parse_ext(e)) end
  return nil
end

local function entry_host(e)
  local k = entry_key(e)
  if not k then return '' end
  return host_of(k)
end

-- hq_key is host's queue of level p; hz_key the zset of level p's hosts.
local function hq_key(host, p)
  if p == 0 then return crawl_key('host_queue', host) end
  return crawl_key('host_level', itoa(p) .. ':' .. host)
end

local function hz_key(p)
  if p == 0 then return crawl_key('hosts') end
  return crawl_key('hosts', itoa(p))
end

-- levels_used are the levels that may hold entries, the highest first: 0,
-- and each level 1..9 the crawl ever used (its stats field exists). Read
-- once per call.
local function levels_used()
  if C.lv then return C.lv end
  local c = rcall('HMGET', K.stats, unpack(P_FIELDS))
  local lv = {}
  for p = 9, 1, -1 do
    if c[p] or C.level_delta[P_FIELDS[p]] then lv[#lv + 1] = p end
  end
  lv[#lv + 1] = 0
  C.lv = lv
  return lv
end

-- host_slot is host's slot (ms) as it enters level p: its score in another
-- level's zset, or in hidle (which it then leaves), or 0.
local function host_slot(host, p)
  for _, q in ipairs(levels_used()) do
    if q ~= p then
      local s = rcall('ZSCORE', hz_key(q), host)
      if s then return s end
    end
  end
  local idle = crawl_key('host_idle')
  local s = rcall('ZSCORE', idle, host)
  if s then
    rcall('ZREM', idle, host)
    return s
  end
  return '0'
end

-- host_entered puts host in level p's zset, its queue there having been
-- empty until now.
local function host_entered(host, p)
  rcall('ZADD', hz_key(p), host_slot(host, p), host)
end

-- pend puts entry e, of priority p, back in pending: in its host's queue
-- or, without a host, its level's list; at the head (front: it was leased
-- first) or at the tail.
local function pend(e, p, front)
  local host = entry_host(e)
  local cmd = front and 'LPUSH' or 'RPUSH'
  if host == '' then
    rcall(cmd, level_key(p), e)
  elseif rcall(cmd, hq_key(host, p), e) == 1 then
    host_entered(host, p)
  end
  level_count(p, 1)
  C.delta.pending = C.delta.pending + 1
end

-- push_host queues new entry e of host at level p at the tail, with the
-- other adds of the call (flush_hosts).
local function push_host(host, e, p)
  local q = hq_key(host, p)
  local b = C.push_hosts[q]
  if not b then
    b = {host = host, p = p}
    C.push_hosts[q] = b
  end
  b[#b + 1] = e
end

-- flush_hosts writes push_host's entries, one RPUSH per host and level.
local function flush_hosts()
  if nxt(C.push_hosts) == nil then return end
  for q, b in pairs(C.push_hosts) do
    local len = 0
    for i = 1, #b, 1000 do
      len = rcall('RPUSH', q, unpack(b, i, math.min(i + 999, #b)))
    end
    if len == #b then host_entered(b.host, b.p) end
  end
  C.push_hosts = {}
end

-- next_slot is tracker.NextSlot: one interval after the previous slot
-- while the host is busy, after now once it was idle (or never booked).
local function next_slot(prev, iv)
  if prev == 0 or prev < C.now - iv then prev = C.now end
  return prev + iv
end

-- host_rebook moves host's slot to slot in every level's zset it is in
-- (skip: a level whose queue it just left), and reports whether it is in
-- any (has entries).
local function host_rebook(host, slot, skip)
  local s, any = itoa(slot), false
  for _, q in ipairs(levels_used()) do
    if q ~= skip and rcall('ZSCORE', hz_key(q), host) then
      rcall('ZADD', hz_key(q), s, host)
      any = true
    end
  end
  return any
end

-- host_hold keeps host from being handed out before till (ms), and makes
-- iv (ms, when positive) its own interval per egress (Deferral).
local function host_hold(host, till, iv)
  if host == '' then return end
  if iv > 0 then rcall('HSET', crawl_key('host_pace'), host, itoa(iv)) end
  for _, q in ipairs(levels_used()) do
    local s = rcall('ZSCORE', hz_key(q), host)
    if s and tonum(s) < till then rcall('ZADD', hz_key(q), itoa(till), host) end
  end
end
