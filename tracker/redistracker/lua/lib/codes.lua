-- lib.lua: helpers shared by every tracker operation. The Go side (redis.go:
-- buildLibrary) makes one Redis Functions library of it: this file, then each
-- operation's file as a function, each registered as ds_<hash>_<op>; each
-- operation is one FCALL (FCALL_RO for those that write nothing).
--
-- What redis-server spends (callgrind, perf; bench-tracker's
-- redis_cpu_us_per_item and -only lifesplit measure it): this file's top
-- level (constants, ~100 closures) runs once, at FUNCTION LOAD. As a script
-- prepended to each operation (EVALSHA) it ran at every call: ~12.5 µs of
-- redis-server per call, 0.6 µs per item of a 64-item batch's add, checkout
-- and complete. Its locals therefore live across calls: begin (at the end)
-- sets every per-call one afresh. KEYS and ARGV are the library's locals
-- (upvalues), set by each function's callback. A global read (string,
-- tonumber, redis) costs ~200, Redis 7 reads globals through a protected
-- table, so the code reads the C functions it calls through upvalues
-- (rcall, s_byte, ... set by init); number-to-string through printf's
-- floating point costs ~2k (itoa writes integers from digit tables, and no
-- number is handed to redis.call, which would print it with '%.17g'), a
-- decimal's tonumber ~1k (strtod), a hex one's far less (strtoul); each
-- argument and each value returned is a Lua string made or read, ~1k, so
-- the wire formats send and return only what an item needs (add_item's 3,
-- complete's 3 per plain completion, checkout's 1 per plain lease, its
-- record); batch commands (one HSET/ZADD/SADD per call) beat a redis.call
-- per item, each ~3-8k, and a call skips what its crawl lacks (checkout's
-- one EXISTS). callgrind, redis-server instructions per item of a batch of
-- 64 (add, checkout, complete): 76.7k before these, 57.7k after
-- (docs/scale.md).
--
-- The contract every script shares (key names: tracker/keys.go):
--   KEYS[1] pending   list of entries (below), FIFO: RPUSH new, LINDEX/LPOP 0 at checkout
--   KEYS[2] leases    zset token -> deadline (ms), as the scripts before lease groups kept
--                     every lease: read and drained (requeue, extend, drop), never
--                     added to; the leases of today are in deadlines (lease groups below)
--   KEYS[3] lease     hash token -> record: "attempts:depth:#worker:<worker><key>",
--                     prefixed "+<meta>;" for an item with meta (below)
--   KEYS[4] workers   zset worker -> last seen + ttl (ms)
--   KEYS[5] delayed   zset entry -> due (ms)
--   KEYS[6] failed    zset key -> failed at (ms)
--   KEYS[7] failinfo  hash key -> "attempts:depth:reason", prefixed "+<meta>;" as a record
--   KEYS[8] stats     hash of counters: pending leased delayed done failed added bytes;
--                     p1..p9 (pending at priority 1..9, only once one was used),
--                     pskip (the starvation guard's count, tracker.StarveEvery)
--   KEYS[9] fpmeta    hash: the fingerprint table's linear-hashing state
--   KEYS[10] crawl    string: the crawl's id, written by the first add (check_crawl)
--   KEYS[11]          (checkout, requeue of a worker) wl:<worker>, that worker's lease groups
--   ARGV[1] key prefix "distscrape:{crawl}:" of the derived keys (documented in
--           keys.go: id:<shard>, fp:<bucket>, wl:<worker>, w:<worker>; all in
--           the crawl's slot)
--   ARGV[2] now (ms)   ARGV[3] fingerprint base level   ARGV[4] fingerprint bucket load
--   ARGV[5] max attempts; ARGV[6...] belong to the operation.
--
-- Entries of the pending list (the first byte, a TAG_ below, says which):
--   <key>                          depth 0, attempts 0 (first byte above TAG_MAX)
--   TAG_RUN "lo:hi"                IDs lo..hi (< 2^40) already marked seen: coalesced adds
--   TAG_RANGE "lo:hi"              IDs lo..hi (< 2^40) of AddRange, deduplicated when carved
--   TAG_ITEM "depth:attempts:key"  any item
--   TAG_HUGE_RANGE "lo:hi"         IDs lo..hi (>= 2^40, decimal strings) of AddRange,
--                                  deduplicated by fingerprint when carved
--   TAG_EXT "depth:attempts:meta;key"  an item with meta (below)
-- TAG_NAMED "depth:attempts:meta;key" is TAG_EXT with label names for IDs:
-- only in add arguments (Go writes it; add_item stores it as TAG_EXT).
-- TAG_REVISIT n <n bytes> <entry>: a revisit header before an entry above:
-- TAG_REVISIT, n, then n bytes only Go encodes and reads (flags, visits,
-- validators: redis_revisit.go). Lease records carry it before the key; the
-- revisit index's lists (rv:<s>) hold such entries, attempts 0.
--
-- Meta is what an item carries beyond key, depth and attempts, only when it
-- has some (a crawl without priorities, labels or revisits never writes it):
-- "p:l:v:f", trailing zero or empty fields left out ("3", "0:1.4", "0::2:1"):
--   p  priority 1..9 (tracker.Item.Priority; 0 is level 0, the pending list)
--   l  label IDs of the crawl's label table (derived key labels), '.'-joined;
--      names ','-joined in TAG_NAMED and in what scripts return to Go
--   v  visits (tracker.Lease.Visits: revisits)
--   f  flags, a bitmask: FLAG_VALIDATORS (validators kept for the key)
-- Parsers ignore fields after these: new ones are appended.
-- An item of priority p > 0 waits in the derived list pending:<p>; stats'
-- p<p> counts it (checkout reads p1..p9 in one HMGET: O(1)).
--
-- The wire format's bytes, named once. Each constant names its Go twin in
-- redis_encode.go; TestWireConstantsAgree reads this file and checks them.
local TAG_RUN = 1        -- Go: tagRun
local TAG_RANGE = 2      -- Go: tagRange
local TAG_ITEM = 3       -- Go: tagItem
local TAG_HUGE_RANGE = 4 -- Go: tagHugeRange
local TAG_EXT = 5        -- Go: tagExt
local TAG_NAMED = 6      -- Go: tagNamed
local TAG_REVISIT = 7    -- Go: tagRevisit
local TAG_MAX = 7        -- Go: tagMax (a bare key's first byte is above it)
local FLAG_VALIDATORS = 1 -- Go: flagValidators
local STARVE_EVERY = 8   -- Go: starveEvery (tracker.StarveEvery)
-- Checkout's reply code, its first value (Go: ops_args.go).
local CHECKOUT_DONE = 0      -- Go: checkoutDone
local CHECKOUT_MORE = 1      -- Go: checkoutMore
local CHECKOUT_PAUSED = 2    -- Go: checkoutPaused
local CHECKOUT_MAX_PAGES = 3 -- Go: checkoutMaxPages
local CHECKOUT_MAX_BYTES = 4 -- Go: checkoutMaxBytes
-- The tags as strings: begin sets them at the first call (a library's top
-- level runs without the string library in Redis 7.0).
local S_RUN, S_ITEM, S_HUGE_RANGE
local S_EXT
