-- dec writes a non-negative integer below 2^53 in decimal, three digits at
-- a time.
local function dec(n)
  if n < 1000 then return DEC[n] end
  local a = n % 1000
  n = (n - a) / 1000
  if n < 1000 then return DEC[n] .. DEC3[a] end
  local b = n % 1000
  n = (n - b) / 1000
  if n < 1000 then return DEC[n] .. DEC3[b] .. DEC3[a] end
  local c = n % 1000
  n = (n - c) / 1000
  if n < 1000 then return DEC[n] .. DEC3[c] .. DEC3[b] .. DEC3[a] end
  local d = n % 1000
  return dec((n - d) / 1000) .. DEC3[d] .. DEC3[c] .. DEC3[b] .. DEC3[a]
end

-- itoa writes an integer without exponent (Lua numbers are doubles); what
-- is no integer below 2^53 in magnitude goes through '%.0f'.
local function itoa(n)
  local s = DEC[n] -- 0..999; no index for a fraction
  if s then return s end
  if n % 1 ~= 0 or n >= 9007199254740992 or n <= -9007199254740992 then return s_format('%.0f', n) end
  if n < 0 then return '-' .. dec(-n) end
  return dec(n)
end

-- split_revisit splits what starts with a revisit header (TAG_REVISIT, n,
-- n bytes) at position p (default 1) into the header and the rest; '' and
-- the whole for anything else.
local function split_revisit(s, p)
  p = p or 1
  if s_byte(s, p) ~= TAG_REVISIT then return '', s_sub(s, p) end
  local e = p + 1 + s_byte(s, p + 1)
  return s_sub(s, p, e), s_sub(s, e + 1)
end

-- rv_mark sets (v 1) or clears (v 0) the bit of key, a numeric ID below
-- 2^40 as its revisit header hdr says (flag bit 0), in the derived bitmap
-- rvid:<shard>: the IDs with a revisit waiting or in flight, which a recrawl
-- of the ranges leaves to the revisit index. stats' rvids counts the bits set.
local function rv_mark(key, hdr, v)
  if hdr == '' or s_byte(hdr, 3) % 2 == 0 then return end
  local id = tonum(key)
  local s = math.floor(id / SHARD_BITS)
  if rcall('SETBIT', crawl_key('rvid', itoa(s)), itoa(id - s * SHARD_BITS), itoa(v)) ~= v then
    C.delta.rvids = C.delta.rvids + (v == 1 and 1 or -1)
  end
end
