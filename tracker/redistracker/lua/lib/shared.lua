-- shared.lua: what the shared store's operations (lua/ops/shared*.lua,
-- tracker.SharedStore) share. A value or field is stored as
-- "<expires ms>:<value>" (Go: encodeShared), expires on the tracker's clock.

-- shared_expires is a stored value's expiry, nil when it has none: 1 to 15
-- digits (exact in a double) and ':' (Go: decodeShared, maxExpiresDigits).
local function shared_expires(v)
  local d = string.match(v, '^(%d+):')
  if d and #d <= 15 then return tonumber(d) end
end

-- shared_cleanup is when Redis may drop a value of the tracker clock's
-- `expires` and `ttl` ms: the later of expires and the Redis clock's now +
-- ttl, so a tracker clock behind Redis's never loses a live value. The
-- readers decide expiry by the tracker's clock: this is cleanup only.
local function shared_cleanup(expires, ttl)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  return math.max(expires, now + ttl)
end
