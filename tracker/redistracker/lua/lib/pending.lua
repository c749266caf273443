-- ---- pending ----

-- as_run parses an entry that is a run of marked IDs (TAG_RUN "lo:hi", or a
-- plain canonical ID below 2^40) into {lo, hi}; anything else gives nil.
local function as_run(e)
  local c = s_byte(e, 1)
  if c == TAG_RUN then
    local lo, hi = s_match(e, '^' .. S_RUN .. '(%d+):(%d+)$')
    return {tonum(lo), tonum(hi)}
  end
  if c >= 49 and c <= 57 and #e <= 13 and not s_find(e, '%D') then
    local v = tonum(e)
    if v < 1099511627776 then return {v, v} end
  end
  return nil
end

local function run_entry(r)
  if r[1] == r[2] then return itoa(r[1]) end
  return S_RUN .. itoa(r[1]) .. ':' .. itoa(r[2])
end

-- push_id appends a marked ID (depth 0, attempts 0), extending the run of
-- consecutive IDs at the tail instead of adding an entry when it can.
local function push_id(id)
  local n = #C.push
  local last
  if n > 0 then
    last = C.push[n]
    if type(last) ~= 'table' then last = nil end
  else
    if C.tail == nil then
      C.tail = rcall('LINDEX', K.pending, '-1') or false
      if C.tail then C.tail_run = as_run(C.tail) end
    end
    last = C.tail_run
  end
  if last and last[2] + 1 == id then
    last[2] = id
    if n == 0 then C.tail_dirty = true end
    return
  end
  C.push[n + 1] = {id, id}
  C.push_runs = true
end

local function flush_push()
  if C.tail_dirty then rcall('LSET', K.pending, '-1', run_entry(C.tail_run)) end
  if C.push[1] ~= nil then
    if C.push_runs then
      for i = 1, #C.push do
        if type(C.push[i]) == 'table' then C.push[i] = run_entry(C.push[i]) end
      end
      C.push_runs = false
    end
    call_multi('RPUSH', K.pending, C.push, 1000)
    C.push = {}
  end
  if nxt(C.push_levels) ~= nil then
    for p, es in pairs(C.push_levels) do call_multi('RPUSH', level_key(p), es, 1000) end
    C.push_levels = {}
  end
  flush_hosts()
  C.tail, C.tail_run, C.tail_dirty = nil, nil, nil
end

-- push_named stores a new item's TAG_NAMED entry as TAG_EXT (label names
-- to ids, each once) at its priority's level: in its host's queue (host,
-- '' for none) or its level's list.
local function push_named(e, host)
  local key, d, a, m = parse_ext(e)
  if m.l ~= '' then
    local ids, seen = {}, {}
    for name in string.gmatch(m.l, '[^,]+') do
      local id = label_id(name)
      if not seen[id] then
        seen[id] = true
        ids[#ids + 1] = id
      end
    end
    m.l = table.concat(ids, '.')
  end
  e = entry(key, d, a, m)
  if host ~= '' then
    push_host(host, e, m.p)
  elseif m.p > 0 then
    local es = C.push_levels[m.p]
    if not es then
      es = {}
      C.push_levels[m.p] = es
    end
    es[#es + 1] = e
  else
    C.push[#C.push + 1] = e
  end
  level_count(m.p, 1)
  lmove(m, nil, 'pending')
  lmove(m, nil, 'added')
end

-- add_item adds one item unless seen and returns 1 if it was new (the
-- caller counts the new ones: added), else 0. a, b: an ID below 2^40 and
-- '' (bitmap dedup), or a fingerprint's x in hex and its member (as
-- fp_add takes them). e is its pending entry.
local function add_item(a, b, e)
  if b == '' then
    local id = tonum(a)
    if not id_mark(id) then return 0 end
    if e == a then
      push_id(id)
    elseif s_byte(e, 1) == TAG_NAMED then
      push_named(e, '')
    else
      C.push[#C.push + 1] = e
    end
  else
    if not fp_add(tonum(a, 16), b) then return 0 end
    local host = entry_host(e)
    if s_byte(e, 1) == TAG_NAMED then
      push_named(e, host)
    elseif host ~= '' then
      push_host(host, e, 0)
    else
      C.push[#C.push + 1] = e
    end
  end
  return 1
end

-- added counts n new items (add_item's) in pending and added.
local function added(n)
  C.delta.pending = C.delta.pending + n
  C.delta.added = C.delta.added + n
end
