-- failed.lua: list dead letters, oldest first.
-- KEYS: the fixed keys (codes.lua): failed, failinfo are used.
-- ARGV: the common 1-5 (codes.lua); 6 limit (0: all).
-- Returns {key1, at1 (ms), info1 ("attempts:depth:reason", prefixed "+meta;"
--   with label names as the library's meta_out writes them), ...}.
-- Cost: O(limit) (O(failed) for all: an operator's command, not a hot path).
local rows = rcall('ZRANGE', K.failed, '0', itoa(tonumber(ARGV[6]) - 1), 'WITHSCORES')
local out = {}
for i = 1, #rows, 2 do
  out[#out + 1] = rows[i]
  out[#out + 1] = rows[i + 1]
  local v, m = split_meta(rcall('HGET', K.failinfo, rows[i]) or '0:0:')
  local ms = meta_out(m)
  if ms ~= '' then v = '+' .. ms .. ';' .. v end
  out[#out + 1] = v
end
return out
