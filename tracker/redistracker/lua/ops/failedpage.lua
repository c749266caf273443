-- failedpage.lua: one chunk of dead letters, the newest first, after a
-- cursor (Inspector.FailedPage; the caller filters and pages); or, given
-- keys, those of them that are dead letters (a filtered Requeue by key).
-- KEYS: the fixed keys (codes.lua): failed, failinfo are used.
-- ARGV: the common 1-5 (codes.lua); 6 the cursor's failed-at (ms; '' from the newest),
--   7 the cursor's key; 8 count; 9... keys (then 6-8 are ignored).
-- Returns {total, key1, at1 (ms), info1, ...}, info as failed.lua returns
--   it: up to count dead letters ordered (at, key) descending, strictly below
--   the cursor, which stays valid while dead letters come and go.
-- Cost: O(log(failed) + count), O(keys) for keys; when the cursor's own dead
--   letter is gone (requeued), plus the dead letters failed in the same
--   millisecond. It writes nothing.
local out = {rcall('ZCARD', K.failed)}
local keys, ats = {}, {}
if #ARGV >= 9 then
  for i = 9, #ARGV do
    local at = rcall('ZSCORE', K.failed, ARGV[i])
    if at then
      keys[#keys + 1] = ARGV[i]
      ats[#ats + 1] = at
    end
  end
else
  local count = tonumber(ARGV[8])
  local at, ckey = ARGV[6], ARGV[7]
  local start, ties = 0, false
  if at ~= '' then
    local sc = rcall('ZSCORE', K.failed, ckey)
    if sc and tonumber(sc) == tonumber(at) then
      start = rcall('ZREVRANK', K.failed, ckey) + 1
    else
      start = rcall('ZCOUNT', K.failed, '(' .. at, '+inf')
      ties = true
    end
  end
  -- ge compares bytes, as the zset orders members (Lua's >= follows the
  -- locale's collation).
  local function ge(a, b)
    for i = 1, math.min(#a, #b) do
      local x, y = string.byte(a, i), string.byte(b, i)
      if x ~= y then return x > y end
    end
    return #a >= #b
  end
  local rows
  while true do
    rows = rcall('ZRANGE', K.failed, itoa(start), itoa(start + count - 1), 'REV', 'WITHSCORES')
    if not ties then break end
    -- Members of one score come in descending byte order: skip those at or
    -- above the cursor's key.
    local i = 1
    while i < #rows and tonumber(rows[i + 1]) == tonumber(at) and ge(rows[i], ckey) do i = i + 2 end
    if i <= #rows or #rows < 2 * count then
      rows = {unpack(rows, i)}
      break
    end
    start = start + count
  end
  for i = 1, #rows, 2 do
    keys[#keys + 1] = rows[i]
    ats[#ats + 1] = rows[i + 1]
  end
end
if #keys == 0 then return out end
local infos = rcall('HMGET', K.failinfo, unpack(keys))
for i = 1, #keys do
  local v, m = split_meta(infos[i] or '0:0:')
  local ms = meta_out(m)
  if ms ~= '' then v = '+' .. ms .. ';' .. v end
  out[#out + 1] = keys[i]
  out[#out + 1] = ats[i]
  out[#out + 1] = v
end
return out
