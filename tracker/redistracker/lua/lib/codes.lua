-- codes.lua: the wire format shared by every operation, and the reply
-- codes; the first file of the library (library.go concatenates lua/lib/
-- in libFiles' order, then registers each lua/ops/<fn>.lua as a function
-- ds_<hash>_<fn>; each operation is one FCALL, FCALL_RO if it writes
-- nothing). The library's top level runs once, at FUNCTION LOAD: what a
-- call needs afresh is made by begin (call.lua, state.lua). The code reads
-- the C functions it calls through upvalues (init), writes integers with
-- itoa (no printf floating point) and hands redis.call strings only: each
-- is the cheaper way, and bench-tracker's redis_cpu_us_per_item measures
-- the whole.
--
-- The contract every life-cycle operation shares (key names: keys.go):
--   KEYS     the fixed keys, in keys.go's order (K.<name> in state.lua):
--            pending   list of entries (below), FIFO: RPUSH new, LRANGE/LTRIM at checkout
--            lease     hash token -> record: "attempts:depth:#worker:<worker><key>",
--                      prefixed "+<meta>;" for an item with meta (below)
--            workers   zset worker -> last seen + ttl (ms)
--            delayed   zset entry -> due (ms)
--            failed    zset key -> failed at (ms)
--            failinfo  hash key -> "attempts:depth:reason", prefixed "+<meta>;" as a record
--            stats     hash of counters: pending leased delayed done failed added bytes;
--                      p1..p9 (pending at priority 1..9, only once one was used),
--                      pskip (the starvation guard's count, tracker.StarveEvery)
--            fpmeta    hash: the fingerprint table's linear-hashing state, the layout version
--            crawl     string: the crawl's id, written by the first add (check_crawl)
--   ARGV[1] key prefix "distscrape:{crawl}:" of the derived keys (crawl_key;
--           all in the crawl's slot)
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
-- The shared store's replies (lua/ops/shared*.lua; Go: redis_shared.go).
local SHARED_HELD = 0 -- Go: sharedHeld (claim: the name holds a live value)
local SHARED_SET = 1  -- Go: sharedSet (put, claim won, field stored)
local SHARED_FULL = 2 -- Go: sharedFull (field: the name has its most fields)
