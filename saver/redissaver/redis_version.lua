-- Keeps the page hash KEYS[1], about to be replaced by a revisit's body,
-- as an earlier version: a copy (TTL included) at KEYS[1]..'%v'..its visit,
-- zero-padded, listed in the index KEYS[2] (a sorted set by visit); then
-- deletes the oldest versions beyond ARGV[2]. A hash that holds the new
-- body already (ARGV[1], its sha1: a retried save of the same visit) is
-- no earlier version. ARGV[3]: the TTL in ms for the index, 0 for none.
-- The version keys are not declared: the Redis saver takes one node only.
local old = redis.call('HGET', KEYS[1], 'body')
if not old or redis.sha1hex(old) == ARGV[1] then
  return 0
end
local visit = tonumber(redis.call('HGET', KEYS[1], 'visit') or '0') or 0
local vkey = KEYS[1] .. '%v' .. string.format('%010d', visit)
redis.call('COPY', KEYS[1], vkey, 'REPLACE')
redis.call('ZADD', KEYS[2], visit, vkey)
local extra = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[2])
if extra > 0 then
  for _, k in ipairs(redis.call('ZRANGE', KEYS[2], 0, extra - 1)) do
    redis.call('DEL', k)
  end
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, extra - 1)
end
if tonumber(ARGV[3]) > 0 then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
else
  redis.call('PERSIST', KEYS[2])
end
return 1
