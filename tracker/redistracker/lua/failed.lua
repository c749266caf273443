-- failed.lua: list dead letters, oldest first.
-- KEYS: 6 failed, 7 failinfo.
-- ARGV: lib.lua's 1-5; 6 limit (0: all).
-- Returns {key1, at1 (ms), info1 ("attempts:depth:reason"), ...}.
-- Cost: O(limit) (O(failed) for all: an operator's command, not a hot path).
local rows = redis.call('ZRANGE', K_FAILED, 0, tonumber(ARGV[6]) - 1, 'WITHSCORES')
local out = {}
for i = 1, #rows, 2 do
  out[#out + 1] = rows[i]
  out[#out + 1] = rows[i + 1]
  out[#out + 1] = redis.call('HGET', K_FAILINFO, rows[i]) or '0:0:'
end
return out
