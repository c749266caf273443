-- lookup.lua: where one item is, without scanning a queue (Inspector.Lookup;
-- the caller searches the leases, which are keyed by token, itself).
-- KEYS: the fixed keys (codes.lua).
-- ARGV: the common 1-5 (codes.lua); 6 key; 7, 8 its dedup parts and 9 its entry, as
--   add_item takes them; 10 pending entries looked at (a URL's: in its host's queue); 11 the
--   deepest depth probed among delayed; 12 '1' when the key is an ID >= 2^40.
-- Returns {state, depth, attempts, time (ms), reason, meta (as meta_out)}:
--   state 'failed' (time: failed at), 'delayed' (time: due), 'pending'
--   (among the first ARGV[10] pending entries, the highest level first),
--   'seen' (added, found nowhere else: leased, done, pending further on, or
--   delayed with meta or deeper than probed) or 'none' (never added, or an
--   ID of a range not carved yet beyond the entries looked at).
-- Cost: O(ARGV[10] + ARGV[11] × max attempts); it writes nothing.
local key = ARGV[6]
local info = rcall('HGET', K.failinfo, key)
if info then
  local a, d, reason, m = parse_failinfo(info)
  return {'failed', d, a, rcall('ZSCORE', K.failed, key) or '0', reason, meta_out(m)}
end

-- Delayed entries without meta are "depth:attempts:key": probe them at once.
local per = C.max_attempts + 1
local probe = {}
for d = 0, tonumber(ARGV[11]) do
  for a = 0, C.max_attempts do probe[#probe + 1] = entry(key, d, a) end
end
local due = rcall('ZMSCORE', K.delayed, unpack(probe))
for i = 1, #probe do
  if due[i] then
    return {'delayed', math.floor((i - 1) / per), (i - 1) % per, due[i], '', ''}
  end
end

local id
if ARGV[8] == '' then id = tonumber(ARGV[7]) end
local function id_seen(v)
  local k, off = id_shard(v)
  return rcall('GETBIT', k, itoa(off)) == 1
end
local function fp_seen()
  return rcall('SISMEMBER', fp_key(fp_bucket(fp_state(), tonumber(ARGV[7], 16))), ARGV[8]) == 1
end

local tail = ':' .. key
local left = tonumber(ARGV[10])
local host = host_of(key) -- a URL waits in its host's queue
local levels = rcall('HMGET', K.stats, 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9')
for p = 9, 0, -1 do
  if left > 0 and (p == 0 or tonumber(levels[p] or '0') > 0) then
    local q = level_key(p)
    if host ~= '' then q = hq_key(host, p) end
    local es = rcall('LRANGE', q, '0', itoa(left - 1))
    left = left - #es
    for _, e in ipairs(es) do
      local c = string.byte(e, 1)
      if c == TAG_REVISIT then -- a revisit: its entry follows the header
        local _
        _, e = split_revisit(e)
        c = string.byte(e, 1)
      end
      if c > TAG_MAX then
        if e == key then return {'pending', 0, 0, '0', '', ''} end
      elseif c == TAG_ITEM then
        if string.sub(e, -#tail) == tail then
          local d, a, k = string.match(e, '^.(%d+):(%d+):(.*)$')
          if k == key then return {'pending', tonumber(d), tonumber(a), '0', '', ''} end
        end
      elseif c == TAG_EXT then
        if string.sub(e, -#key - 1) == ';' .. key then
          local k, d, a, m = parse_ext(e)
          if k == key then return {'pending', d, a, '0', '', meta_out(m)} end
        end
      elseif c == TAG_HUGE_RANGE then
        if ARGV[12] == '1' then
          local lo, hi = string.match(e, '^.(%d+):(%d+)$')
          if dec_le(lo, key) and dec_le(key, hi) and not fp_seen() then return {'pending', 0, 0, '0', '', ''} end
        end
      elseif id then -- a run (marked) or a range (marked when carved)
        local lo, hi = string.match(e, '^.(%d+):(%d+)$')
        if id >= tonumber(lo) and id <= tonumber(hi) and (c == TAG_RUN or not id_seen(id)) then
          return {'pending', 0, 0, '0', '', ''}
        end
      end
    end
  end
end

local seen
if id then seen = id_seen(id) else seen = fp_seen() end
if seen then return {'seen', 0, 0, '0', '', ''} end
return {'none', 0, 0, '0', '', ''}
