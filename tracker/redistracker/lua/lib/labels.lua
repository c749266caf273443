-- ---- labels: the crawl's table (derived key labels: name -> id, '#'<id> ->
-- name, '#' -> the last id given) and per-label counters (derived key
-- lstats: '<id>:<state>' -> count, for labeled items only) ----

-- label_id returns name's id, giving it the next one the first time.
local function label_id(name)
  local id = C.label_ids[name]
  if id then return id end
  id = rcall('HGET', K.labels, name)
  if not id then
    id = itoa(rcall('HINCRBY', K.labels, '#', '1'))
    rcall('HSET', K.labels, name, id, '#' .. id, name)
  end
  C.label_ids[name] = id
  return id
end

-- label_names turns '.'-joined ids into ','-joined names.
local function label_names(l)
  local out = {}
  for id in string.gmatch(l, '%d+') do
    local name = C.label_names[id]
    if not name then
      name = rcall('HGET', K.labels, '#' .. id) or ('#' .. id)
      C.label_names[id] = name
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

-- lmove counts m's labels out of state `from` and into `to` (either may be nil).
local function lmove(m, from, to)
  if not m or m.l == '' then return end
  for id in string.gmatch(m.l, '%d+') do
    if from then
      local f = id .. ':' .. from
      C.label_delta[f] = (C.label_delta[f] or 0) - 1
    end
    if to then
      local f = id .. ':' .. to
      C.label_delta[f] = (C.label_delta[f] or 0) + 1
    end
  end
end
