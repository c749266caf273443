-- ---- meta (priority, labels, visits, flags) ----

-- meta_dec parses "p:l:v:f" (fields may be missing) into a table.
local function meta_dec(ms)
  local p, l, v, f = s_match(ms, '^(%d*):?([^:]*):?(%d*):?(%d*)')
  return {p = tonum(p) or 0, l = l or '', v = tonum(v) or 0, f = tonum(f) or 0}
end

-- meta_enc writes m, or returns nil when m is nil or carries nothing.
local function meta_enc(m)
  if not m then return nil end
  local t = {itoa(m.p), m.l, itoa(m.v), itoa(m.f)}
  local n = 4
  -- Field 2 is labels: a name may be '0', only an empty one is left out.
  while n > 0 and (t[n] == '' or (n ~= 2 and t[n] == '0')) do n = n - 1 end
  if n == 0 then return nil end
  return table.concat(t, ':', 1, n)
end

local function entry(key, depth, attempts, meta)
  local ms = meta_enc(meta)
  if ms then return S_EXT .. itoa(depth) .. ':' .. itoa(attempts) .. ':' .. ms .. ';' .. key end
  if depth == 0 and attempts == 0 and s_byte(key, 1) > TAG_MAX then return key end
  return S_ITEM .. itoa(depth) .. ':' .. itoa(attempts) .. ':' .. key
end

-- parse_ext parses a TAG_EXT (or TAG_NAMED) entry: key, depth, attempts, meta.
local function parse_ext(e)
  local d, a, ms, p = s_match(e, '^.(%d+):(%d+):([^;]*);()')
  return s_sub(e, p), tonum(d), tonum(a), meta_dec(ms)
end

-- with_meta prefixes a record or failinfo value with "+meta;" when m carries any.
local function with_meta(v, m)
  local ms = meta_enc(m)
  if ms then return '+' .. ms .. ';' .. v end
  return v
end

-- split_meta undoes with_meta: the value without the prefix, and its meta (or nil).
local function split_meta(v)
  if s_byte(v, 1) ~= 43 then return v, nil end -- '+'
  local ms, q = s_match(v, '^%+([^;]*);()')
  return s_sub(v, q), meta_dec(ms)
end

local function record(key, depth, attempts, worker, meta)
  return with_meta(itoa(attempts) .. ':' .. itoa(depth) .. ':' .. itoa(#worker) .. ':' .. worker .. key, meta)
end

-- record_head returns a function of (key, depth, attempts) making the
-- records of worker's leases (record's format), each head formatted once: a
-- batch's items mostly share depth and attempts, and string.format is the
-- costly part of a record.
local function record_head(worker)
  local heads, wlen = {}, ':' .. itoa(#worker) .. ':' .. worker
  return function(key, depth, attempts, hdr)
    local byd = heads[depth]
    if not byd then
      byd = {}
      heads[depth] = byd
    end
    local h = byd[attempts]
    if not h then
      h = itoa(attempts) .. ':' .. itoa(depth) .. wlen
      byd[attempts] = h
    end
    if hdr and hdr ~= '' then return h .. hdr .. key end
    return h .. key
  end
end

local function parse_record(rec)
  local meta
  rec, meta = split_meta(rec)
  local a, d, n, p = s_match(rec, '^(%d+):(%d+):(%d+):()')
  n = tonum(n)
  local hdr, key = split_revisit(rec, p + n)
  return key, tonum(d), tonum(a), s_sub(rec, p, p + n - 1), meta, hdr
end
