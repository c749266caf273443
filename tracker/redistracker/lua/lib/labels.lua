-- ---- labels: the crawl's table (derived key labels: name -> id, '#'<id> ->
-- name, '#' -> the last id given) and per-label counters (derived key
-- lstats: '<id>:<state>' -> count, for labeled items only) ----

local K_LABELS, K_LSTATS -- PREFIX .. 'labels', 'lstats' (begin)
local LID, LNAME = {}, {}

-- label_id returns name's id, giving it the next one the first time.
local function label_id(name)
  local id = LID[name]
  if id then return id end
  id = rcall('HGET', K_LABELS, name)
  if not id then
    id = itoa(rcall('HINCRBY', K_LABELS, '#', '1'))
    rcall('HSET', K_LABELS, name, id, '#' .. id, name)
  end
  LID[name] = id
  return id
end

-- label_names turns '.'-joined ids into ','-joined names.
local function label_names(l)
  local out = {}
  for id in string.gmatch(l, '%d+') do
    local name = LNAME[id]
    if not name then
      name = rcall('HGET', K_LABELS, '#' .. id) or ('#' .. id)
      LNAME[id] = name
    end
    out[#out + 1] = name
  end
  return table.concat(out, ',')
end

-- meta_out is m as the scripts return it to Go: label names for ids; '' for none.
local function meta_out(m)
  if not m then return '' end
  local ms = meta_enc({p = m.p, l = label_names(m.l), v = m.v, f = m.f})
  return ms or ''
end

-- has_label says whether m carries label id lid.
local function has_label(m, lid)
  return m ~= nil and m.l ~= '' and s_find('.' .. m.l .. '.', '.' .. lid .. '.', 1, true) ~= nil
end

-- LD accumulates the per-label counter changes; flush writes them.
local LD = {}

-- lmove counts m's labels out of state `from` and into `to` (either may be nil).
local function lmove(m, from, to)
  if not m or m.l == '' then return end
  for id in string.gmatch(m.l, '%d+') do
    if from then
      local f = id .. ':' .. from
      LD[f] = (LD[f] or 0) - 1
    end
    if to then
      local f = id .. ':' .. to
      LD[f] = (LD[f] or 0) + 1
    end
  end
end
