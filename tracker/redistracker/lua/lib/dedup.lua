-- ---- numeric IDs below 2^40: a bitmap in 1 KiB string shards ----

local ZEROS

local function id_shard(id)
  local s = math.floor(id / SHARD_BITS)
  local k = C.shard_keys[s]
  if not k then
    k = crawl_key('id_shard', itoa(s))
    C.shard_keys[s] = k
  end
  return k, id - s * SHARD_BITS
end

-- id_mark marks id seen and reports whether it was new. A shard is created at
-- its full size at once: SETBIT would grow it greedily (up to twice the size).
local function id_mark(id)
  local k, off = id_shard(id)
  if not C.shard_ready[k] then
    if rcall('EXISTS', k) == 0 then
      ZEROS = ZEROS or string.rep('\0', SHARD_BITS / 8)
      rcall('SET', k, ZEROS)
    end
    C.shard_ready[k] = true
  end
  return rcall('SETBIT', k, itoa(off), '1') == 0
end

-- ---- strings and IDs >= 2^40: 64-bit fingerprint members in intsets ----
-- Linear hashing over buckets fp:<b>: b = x mod 2^level, or x mod 2^(level+1)
-- below the split pointer; a bucket is split when the table's load passes
-- `load` per bucket, so every bucket stays an intset (<= 512 entries).

local function fp_state()
  if not C.fp then
    local m = rcall('HMGET', K.fpmeta, 'base', 'load', 'level', 'split', 'n')
    local base = tonum(m[1]) or C.fp_base
    C.fp = {base = base, load = tonum(m[2]) or tonum(ARGV[4]), level = tonum(m[3]) or base,
          split = tonum(m[4]) or 0, n = tonum(m[5]) or 0, dirty = m[3] == false, new = m[3] == false}
    C.fp.level0, C.fp.split0 = C.fp.level, C.fp.split
  end
  return C.fp
end

-- fp_flush writes what changed: the count, the split pointer and level
-- when a bucket split, everything for a new table.
local function fp_flush()
  if not (C.fp and C.fp.dirty) then return end
  if C.fp.new then
    rcall('HSET', K.fpmeta, 'base', itoa(C.fp.base), 'load', itoa(C.fp.load), 'level', itoa(C.fp.level),
      'split', itoa(C.fp.split), 'n', itoa(C.fp.n))
  elseif C.fp.level ~= C.fp.level0 or C.fp.split ~= C.fp.split0 then
    rcall('HSET', K.fpmeta, 'level', itoa(C.fp.level), 'split', itoa(C.fp.split), 'n', itoa(C.fp.n))
  else
    rcall('HSET', K.fpmeta, 'n', itoa(C.fp.n))
  end
end

-- fp_key is the key of bucket b (< 2^40): one concatenation, three digits
-- at a time (dec), where Lua's own b .. '' would print it with '%.14g'.
local function fp_key(b)
  if b < 1000 then return K.fp_bucket .. DEC[b] end
  local a = b % 1000
  b = (b - a) / 1000
  if b < 1000 then return K.fp_bucket .. DEC[b] .. DEC3[a] end
  local c = b % 1000
  b = (b - c) / 1000
  if b < 1000 then return K.fp_bucket .. DEC[b] .. DEC3[c] .. DEC3[a] end
  local d = b % 1000
  return K.fp_bucket .. dec((b - d) / 1000) .. DEC3[d] .. DEC3[c] .. DEC3[a]
end

-- low_bits returns the 64-bit two's complement integer written in decimal
-- in s, modulo m (a power of two, at most 2^30).
local function low_bits(s, m)
  local neg = s_byte(s, 1) == 45
  local r = 0
  for i = neg and 2 or 1, #s do r = (r * 10 + s_byte(s, i) - 48) % m end
  if neg and r ~= 0 then r = m - r end
  return r
end

-- fp_split moves the members of the bucket under the split pointer whose next
-- hash bit is 1 to their new bucket. Cost O(bucket), amortised O(1) per add.
local function fp_split(st)
  local L, s = st.level, st.split
  local bit = 2 ^ (L - st.base) -- member bit i is hash bit base+i
  local src, dst = fp_key(s), fp_key(s + 2 ^ L)
  local movers = {}
  for _, m in ipairs(rcall('SMEMBERS', src)) do
    if low_bits(m, bit * 2) >= bit then movers[#movers + 1] = m end
  end
  for i = 1, #movers, 1000 do
    local j = math.min(i + 999, #movers)
    rcall('SADD', dst, unpack(movers, i, j))
    rcall('SREM', src, unpack(movers, i, j))
  end
  s = s + 1
  if s == 2 ^ L then L, s = L + 1, 0 end
  st.level, st.split = L, s
end

-- fp_bucket is the bucket of a fingerprint's x (its low 40 hash bits) in
-- the table's state st: x mod 2^level, or mod 2^(level+1) below the split
-- pointer.
local function fp_bucket(st, x)
  local L = st.level
  if st.mod_level ~= L then st.mod, st.mod2, st.mod_level = 2 ^ L, 2 ^ (L + 1), L end -- no pow() per item
  local b = x % st.mod
  if b < st.split then b = x % st.mod2 end
  return b
end

-- fp_add adds a fingerprint (x: its low 40 hash bits; member: 64 bits from hash
-- bit `base` on, as a signed decimal) and reports whether it was new.
local function fp_add(x, member)
  local st = fp_state()
  if rcall('SADD', fp_key(fp_bucket(st, x)), member) == 0 then return false end
  st.n = st.n + 1
  st.dirty = true
  local L = st.level
  if st.n > st.load * (st.mod + st.split) and L < 39 and L - st.base < 29 then fp_split(st) end -- st.mod = 2^L
  return true
end

-- hex_to_decimal converts 16 hex digits (a 64-bit two's complement integer)
-- to signed decimal, with base 10^7 limbs so doubles stay exact.
local function hex_to_decimal(h)
  local neg = tonum(s_sub(h, 1, 1), 16) >= 8
  local chunks = {}
  for i = 1, 16, 4 do chunks[#chunks + 1] = tonum(s_sub(h, i, i + 3), 16) end
  if neg then -- two's complement: invert and add one
    local carry = 1
    for i = 4, 1, -1 do
      local v = 65535 - chunks[i] + carry
      if v >= 65536 then v, carry = v - 65536, 1 else carry = 0 end
      chunks[i] = v
    end
  end
  local limbs = {0}
  for _, c in ipairs(chunks) do
    local carry = c
    for i = 1, #limbs do
      local v = limbs[i] * 65536 + carry
      limbs[i] = v % 10000000
      carry = math.floor(v / 10000000)
    end
    while carry > 0 do
      limbs[#limbs + 1] = carry % 10000000
      carry = math.floor(carry / 10000000)
    end
  end
  local s = itoa(limbs[#limbs])
  for i = #limbs - 1, 1, -1 do s = s .. s_format('%07d', limbs[i]) end
  if neg then s = '-' .. s end
  return s
end

-- fp_huge is the fingerprint of an ID >= 2^40 (its decimal string): SHA-1,
-- u = bytes 0-7 and v = bytes 8-15 big-endian. Go's hugeFingerprint agrees.
local function fp_huge(s)
  local h = redis.sha1hex(s)
  local w = s_sub(h, 17, 32) .. s_sub(h, 1, 16) -- v..u, 128 bits
  local q = C.fp_base / 4
  return tonum(s_sub(h, 7, 16), 16), hex_to_decimal(s_sub(w, 17 - q, 32 - q))
end

local function dec_inc(s)
  local i = #s
  while i > 0 and s_byte(s, i) == 57 do i = i - 1 end
  if i == 0 then return '1' .. string.rep('0', #s) end
  return s_sub(s, 1, i - 1) .. string.char(s_byte(s, i) + 1) .. string.rep('0', #s - i)
end

local function dec_le(a, b)
  if #a ~= #b then return #a < #b end
  return a <= b
end
