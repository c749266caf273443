package redistracker

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/distscrape/distscrape/tracker"
)

// Every Redis key of a crawl is built in this file and nowhere else (asynq
// style). All of them start with "distscrape:{CRAWL}:" and so share one hash
// tag: a crawl lives in one slot and every script is valid on Redis Cluster.
//
// Fixed keys (passed to every script through KEYS, in this order):
//
//	pending   list   entries: a key, a run or range of IDs, or "depth:attempts:key" (lua/lib)
//	lease     hash   lease token → "attempts:depth:#worker:<worker><key>"
//	workers   zset   worker → last seen + ttl (ms)
//	delayed   zset   pending entry → due (ms)
//	failed    zset   key → failed at (ms)
//	failinfo  hash   key → "attempts:depth:reason"
//	stats     hash   counters pending leased delayed done failed added bytes
//	                 revisits unchanged rvids
//	fpmeta    hash   fingerprint table state: base, load, level, split, n
//	crawl     string the crawl record: the crawl's id, written by the first
//	                 Add or AddRange (SET if missing). A worker remembers the
//	                 id it saw; a record gone or replaced under it means the
//	                 state vanished (Redis restarted without persistence,
//	                 FLUSHALL, reset and a new seed): checkout, add and stats
//	                 then fail with tracker.ErrStateLost instead of reporting
//	                 an empty queue as a finished crawl. Reset deletes it.
//
// Derived like the keys below; Pause and Resume write it directly:
//
//	paused  string  "<ms>:<by>" while an operator has paused the crawl:
//	                checkout hands out nothing (one GET)
//
// Derived keys (the scripts build them from the prefix, ARGV[1], with
// crawl_key and the suffixes below; they are in
// the same slot because they share the prefix and its hash tag):
//
//	wl:<worker>  set     the lease groups a worker holds (requeue of one worker);
//	                     passed through KEYS where the worker is known up front
//	deadlines    zset    lease group (a token's prefix, lua/lib's lease
//	                     groups) or token (a lease extended apart from its
//	                     group) → deadline (ms)
//	lg           hash    per lease group g: g → its live leases (plus
//	                     groupSplit once Extend split it), g+"n" → its size
//	                     (lua/lib)
//	w:<worker>   hash    the worker's statistics (tracker.WorkerStats): first,
//	                     seen (ms), out, done, failed, expired; hb, its
//	                     heartbeat window (ms) once it sent one; exit and
//	                     exited (ms) once it exited (lua/ops/exit.lua: an exit
//	                     counts while exited >= seen); it expires
//	                     workerMemory lease TTLs after the last checkout or
//	                     extend (lua/lib: seen_worker), and the workers zset
//	                     forgets the worker then too
//	hb           zset    worker → alive until (ms), for the workers that send
//	                     heartbeats and were neither declared dead nor exited:
//	                     checkout and heartbeat read its head to hand back the
//	                     leases of the late (lua/lib: reap_dead)
//	dead         zset    worker → declared dead at (ms), until it comes back;
//	                     forgotten workerMemory heartbeat windows later
//	                     (lua/ops/heartbeat.lua)
//	id:<shard>   string  bitmap of numeric IDs shard·idShardBits ... +idShardBits-1
//	fp:<bucket>  set     intset of 64-bit fingerprint members
//	rate:<host>  string  the host's next free request slot, µs (lua/hostrate.lua;
//	                     passed through KEYS)
//	conc:<host>  zset    the host's fleet-wide permits, permit id → expiry µs
//	                     (lua/hostpermit.lua; passed through KEYS)
//	delay:<host> string  the interval between two requests to the host (µs)
//	                     the workers last booked with: written by ReserveHost
//	                     only when it changes or every delayRefresh, read by
//	                     Hosts; it expires delayTTL after it was written
//	revisits     zset    the revisit index's due seconds: member s, score s·1000
//	                     (lua/lib: revisit, promote_revisits)
//	rv:<s>       list    the revisit entries due at second s (a revisit
//	                     header, then the entry: lua/lib, redis_revisit.go);
//	                     with a 15-byte ETag and a Last-Modified an entry costs
//	                     28 B beyond a done item and its key
//	                     (bench-tracker revisit_overhead_bytes)
//	rvgone       hash    second → entries of rv:<s> a recrawl --match moved ('' left)
//	rvid:<shard> string  bitmap of the numeric IDs (below 2^40; shards as id:)
//	                     with a revisit waiting or in flight (lua/lib:
//	                     rv_mark), which a recrawl of the ranges leaves to the
//	                     revisit index; created by the first such ID
//	idranges     list    every AddRange as "lo:hi" (Recrawl re-runs them)
//	pending:<p>  list    the pending entries of priority p (1..9; 0's are in
//	                     pending) without a host, created by the first item of
//	                     that level
//	h:<host>     list    the pending entries of a URL host at level 0 (its
//	                     politeness key, tracker.HostOf; lua/lib/hosts.lua),
//	                     h<p>:<host> those of level p
//	hosts        zset    the hosts with entries of level 0 → their next slot
//	                     (ms; 0 never booked), hosts<p> those of level p,
//	                     each host scored alike in every zset it is in:
//	                     checkout takes the ready ones (score <= now)
//	hidle        zset    a host with no entries → its next slot, while ahead
//	hpace        hash    host → its own interval per egress (ms), from a
//	                     deferral (a robots.txt Crawl-delay)
//	labels       hash    the crawl's label table: name → id, "#<id>" → name,
//	                     "#" → the last id given (ids are small: 1, 2, ...)
//	lstats       hash    per-label counters "<id>:<state>" (pending leased
//	                     delayed done failed added), labeled items only
//	shared:<name>  string  a tracker.SharedStore value, "<expires ms>:<value>"
//	                       (redis_shared.go); expiry is by the tracker's
//	                       clock, read from the value, and the key expires
//	                       (PEXPIREAT) at the later of that time and the
//	                       Redis clock's now + ttl, for cleanup only
//	sharedf:<name> hash    a SharedStore name's fields: field →
//	                       "<expires ms>:<value>", the key expiring with its
//	                       last field as above. Not "shared:<name>:f": a
//	                       name may hold ':' and would meet another's key
//	sharedx:<name> zset    tracker.SharedFieldLog: "<group>\0<field>" →
//	                       expires (ms), the name's expiry index
//	sharedg:<name>\0<group>  zset  a group's fields → expires: its bound
//	sharedl:<name> zset    field → the version it was put at (FieldsSince)
//	sharedv:<name> string  the name's version: the first put's ms × 1000,
//	                       then one more a put; all five keys expire with
//	                       the name's last field
//
// A crawl that uses no priority, label nor revisit creates none of these
// three and writes its entries and records as before (lua/lib: meta).
//
// # Dedup and memory
//
// Numeric IDs below 2^40 (canonical decimal) are one bit each in a bitmap
// of 1 KiB string shards created at full size (8144 bits: 1018 bytes plus the
// sds header fill one 1 KiB allocation exactly). A dense ID space costs ~1.2
// bits per ID (key and dict overhead included; make bench-tracker measures
// 1.31 at 10^7 IDs); a sparse one costs up to 1 KiB per shard touched. IDs from
// 2^40 on (a dense bitmap of them would not fit any Redis, so such a space is
// sparse: snowflake-style IDs) and every other string are deduplicated by
// fingerprint.
//
// A fingerprint is 128 bits of a hash of the key (xxhash, FingerprintOf; SHA-1
// for IDs >= 2^40, which the checkout script computes too when it carves a
// range). Write u for its first 64 bits and v for the next. Buckets are
// numbered by the low bits of u (linear hashing: 2^base buckets at first, one
// more split each time the table passes `load` members per bucket) and the
// member stored is the 64 bits of v:u from bit `base` on, as a signed integer,
// so every bucket is an intset (8 bytes a member; intsets stay compact up to
// set-max-intset-entries = 512, the default, which the load of 160 keeps
// every bucket under): ~9.5 B per URL once done at 10^7 URLs, ~11 B more
// than the URL itself while it is pending (bench-tracker). Two distinct keys
// collide only if they agree on the
// first base+64 = 76 bits of the hash: among n = 10^9 keys the odds that any
// pair does are about n²/2^77 ≈ 6.6·10^-6; at 10^7 keys, 6.6·10^-10.
const (
	idShardBits  = 8144                 // must equal SHARD_BITS in lua/lib
	hugeID       = 1 << 40              // IDs from here on are deduplicated by fingerprint
	fpBaseLevel  = 12                   // 2^12 buckets before the first split; a multiple of 4
	fpBucketLoad = 160                  // members per bucket before a split (< 512 / 2 with margin)
	workerMemory = tracker.WorkerMemory // must equal WORKER_MEMORY in lua/lib
	// maxDeadListed must equal MAX_DEAD in lua/lib.
	maxDeadListed = tracker.MaxDeadListed
)

// The suffixes of the crawl's key names after its prefix, each spelled
// here only: the Go methods below build names with them, and the Lua
// library gets them as its KEY table (luaKeyNames), which its key helper
// (lua/lib/state.lua) builds names with.
const (
	sfxPending      = "pending"
	sfxLease        = "lease"
	sfxWorkers      = "workers"
	sfxDelayed      = "delayed"
	sfxFailed       = "failed"
	sfxFailInfo     = "failinfo"
	sfxStats        = "stats"
	sfxFPMeta       = "fpmeta"
	sfxCrawl        = "crawl"
	sfxPaused       = "paused"
	sfxLabels       = "labels"
	sfxLabelStats   = "lstats"
	sfxWorkerStats  = "w:"
	sfxWorkerLeases = "wl:"
	sfxLeaseGroups  = "lg"
	sfxDeadlines    = "deadlines"
	sfxIDShard      = "id:"
	sfxFPBucket     = "fp:"
	sfxRevisits     = "revisits"
	sfxRevisitList  = "rv:"
	sfxRevisitGone  = "rvgone"
	sfxRevisitIDs   = "rvid:"
	sfxIDRanges     = "idranges"
	sfxLevel        = "pending:"
	sfxHostQueue    = "h:"
	sfxHostLevel    = "h" // then the level, ':' and the host
	sfxHosts        = "hosts"
	sfxHostIdle     = "hidle"
	sfxHostPace     = "hpace"
	sfxHostRate     = "rate:"
	sfxHostPermits  = "conc:"
	sfxHostDelay    = "delay:"
	sfxShared       = "shared:"
	sfxSharedFields = "sharedf:"
	sfxSharedExpiry = "sharedx:"
	sfxSharedGroup  = "sharedg:"
	sfxSharedLog    = "sharedl:"
	sfxSharedVer    = "sharedv:"
	sfxHeartbeats   = "hb"
	sfxDeadWorkers  = "dead"
	sfxPartitions   = "partitions"
	sfxGrantLock    = "grant"
	sfxOverflow     = "ranges"
	sfxOverflowIDs  = "rangeids"
	sfxSplitLock    = "split"
	sfxLegacyLeases = "leases" // layout 1 only: migrations.go
	sfxOutbox       = "ob"     // partitions only: partition_outbox.go
	sfxOutboxItems  = "obx"
)

// fixedSuffixes are the fixed keys, KEYS[1..n] of every life-cycle
// operation in this order, and their Lua names (K.<name>).
var fixedSuffixes = []struct{ lua, sfx string }{
	{"pending", sfxPending}, {"lease", sfxLease}, {"workers", sfxWorkers}, {"delayed", sfxDelayed},
	{"failed", sfxFailed}, {"failinfo", sfxFailInfo}, {"stats", sfxStats}, {"fpmeta", sfxFPMeta}, {"crawl", sfxCrawl},
}

// luaSuffixes are the keys the Lua builds from the prefix, by their Lua
// names (key(name, part) in lua/lib/state.lua).
var luaSuffixes = []struct{ lua, sfx string }{
	{"paused", sfxPaused}, {"labels", sfxLabels}, {"lstats", sfxLabelStats}, {"worker", sfxWorkerStats},
	{"worker_leases", sfxWorkerLeases}, {"lease_groups", sfxLeaseGroups}, {"deadlines", sfxDeadlines},
	{"id_shard", sfxIDShard}, {"fp_bucket", sfxFPBucket}, {"revisits", sfxRevisits},
	{"revisit_list", sfxRevisitList}, {"rvgone", sfxRevisitGone}, {"rvid", sfxRevisitIDs},
	{"idranges", sfxIDRanges}, {"level", sfxLevel}, {"host_queue", sfxHostQueue}, {"host_level", sfxHostLevel},
	{"hosts", sfxHosts}, {"host_idle", sfxHostIdle}, {"host_pace", sfxHostPace}, {"outbox", sfxOutbox}, {"outbox_items", sfxOutboxItems}, {"heartbeats", sfxHeartbeats}, {"dead_workers", sfxDeadWorkers},
}

// callKeys are the derived keys begin names for every call (K.<name>).
var callKeys = []string{"labels", "lstats", "revisits", "lease_groups", "deadlines", "paused", "fp_bucket"}

// luaKeyNames is the Lua code that gives the library the key names: KEY,
// every suffix by its Lua name, and call_keys(keys, prefix), the table K
// of a call (lua/lib/state.lua): the fixed keys from KEYS, in this order,
// and callKeys from the prefix, in one table constructor.
func luaKeyNames() string {
	var b strings.Builder
	b.WriteString("-- The crawl's key names, from keys.go (luaKeyNames).\n")
	b.WriteString("local function call_keys(keys, prefix)\n  return {")
	for i, k := range fixedSuffixes {
		fmt.Fprintf(&b, "%s = keys[%d], ", k.lua, i+1)
	}
	for _, name := range callKeys {
		for _, k := range luaSuffixes {
			if k.lua == name {
				fmt.Fprintf(&b, "%s = prefix .. %q, ", name, k.sfx)
			}
		}
	}
	b.WriteString("}\nend\nlocal KEY = {")
	for i, k := range append(fixedSuffixes[:len(fixedSuffixes):len(fixedSuffixes)], luaSuffixes...) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s = %q", k.lua, k.sfx)
	}
	b.WriteString("}\n")
	return b.String()
}

// crawlKeys are the key names of one crawl.
type crawlKeys struct {
	prefix string
	fixed  []string // KEYS[1..n] of every life-cycle operation
}

// Indices into crawlKeys.fixed (KEYS[i+1] in the scripts).
const (
	keyPending = iota
	keyLease
	keyWorkers
	keyDelayed
	keyFailed
	keyFailInfo
	keyStats
	keyFPMeta
	keyCrawl
)

func newCrawlKeys(crawl string) crawlKeys { return newCrawlKeysTag(crawl) }

func newCrawlKeysTag(tag string) crawlKeys {
	p := "distscrape:{" + tag + "}:"
	k := crawlKeys{prefix: p}
	for _, f := range fixedSuffixes {
		k.fixed = append(k.fixed, p+f.sfx)
	}
	return k
}

func (k crawlKeys) key(i int) string { return k.fixed[i] }

func (k crawlKeys) paused() string { return k.prefix + sfxPaused }

func (k crawlKeys) labels() string { return k.prefix + sfxLabels }

func (k crawlKeys) labelStats() string { return k.prefix + sfxLabelStats }

func (k crawlKeys) workerStats(worker string) string { return k.prefix + sfxWorkerStats + worker }

func (k crawlKeys) workerLeases(worker string) string { return k.prefix + sfxWorkerLeases + worker }

func (k crawlKeys) leaseGroups() string { return k.prefix + sfxLeaseGroups }

func (k crawlKeys) deadlines() string { return k.prefix + sfxDeadlines }

func (k crawlKeys) idShard(shard uint64) string {
	return k.prefix + sfxIDShard + strconv.FormatUint(shard, 10)
}

func (k crawlKeys) fpBucket(b uint64) string {
	return k.prefix + sfxFPBucket + strconv.FormatUint(b, 10)
}

func (k crawlKeys) revisits() string { return k.prefix + sfxRevisits }

func (k crawlKeys) revisitList(sec string) string { return k.prefix + sfxRevisitList + sec }

func (k crawlKeys) idRanges() string { return k.prefix + sfxIDRanges }

func (k crawlKeys) hostQueue(host string) string { return k.prefix + sfxHostQueue + host }

func (k crawlKeys) hosts() string { return k.prefix + sfxHosts }

func (k crawlKeys) hostRate(host string) string { return k.prefix + sfxHostRate + host }

func (k crawlKeys) hostPermits(host string) string { return k.prefix + sfxHostPermits + host }

func (k crawlKeys) hostDelay(host string) string { return k.prefix + sfxHostDelay + host }

func (k crawlKeys) shared(name string) string { return k.prefix + sfxShared + name }

func (k crawlKeys) sharedFields(name string) string { return k.prefix + sfxSharedFields + name }

func (k crawlKeys) sharedExpiry(name string) string { return k.prefix + sfxSharedExpiry + name }

// sharedGroups is the prefix of a name's group keys: add the group.
func (k crawlKeys) sharedGroups(name string) string { return k.prefix + sfxSharedGroup + name + "\x00" }

func (k crawlKeys) sharedLog(name string) string { return k.prefix + sfxSharedLog + name }

func (k crawlKeys) sharedVersion(name string) string { return k.prefix + sfxSharedVer + name }

// legacyLeases is layout 1's leases zset (migrations.go).
func (k crawlKeys) legacyLeases() string { return k.prefix + sfxLegacyLeases }

// pattern matches every key of the crawl (Reset only: never on a hot path).
// Crawl names are [A-Za-z0-9._-], so nothing in them is a glob character.
func (k crawlKeys) pattern() string { return k.prefix + "*" }

// # Partitions
//
// A crawl opened with tracker.partitions P > 1 (Open, Partitioned) keeps its
// items in P partitions, each a complete set of the keys above under a hash
// tag of its own, "distscrape:{CRAWL/p.k}:": partition p of P, and k the
// first suffix 0, 1, ... that puts the tag's slot in the p-th P-th of the
// 16384 slots. Partitions so spread evenly over the slot space, so over the
// masters of a cluster whose slots were split evenly (redis-cli --cluster
// create does), whatever the crawl's name; every script still touches one
// slot. P = 1 is the layout above, key names unchanged.
//
// One key outside the partitions, under the crawl's own tag:
//
//	partitions  string  P, written by the first tracker opened with P > 1; a
//	                    tracker opened with another P is refused (routing is a
//	                    function of P: a changed P would break dedup)
//	ranges      list    "lo:hi" ID ranges too long to split into blocks at once
//	                    (AddRange), split a slice at a time by checkout
//	rangeids    string  the IDs in ranges (counted as pending and added)
//	split       string  a short lock: one worker splits ranges at a time
//
// Two more in each partition, the hand-off of discoveries to the others
// (partition_outbox.go; layout 3):
//
//	ob          zset    outbox entry id "<q>/<nonce>" → written at (ms): the
//	                    discoveries of pages completed here, bound for
//	                    partition q, not yet confirmed added there
//	obx         hash    outbox entry id → its add arguments, each value
//	                    length-prefixed ("<len>:<value>")
//
// And in partition 0's slot:
//
//	grant       string  a short lock that serializes grants under max_pages
//	                    (with limits only: Partitioned.Checkout)
//	shared:<name>, sharedf:<name>  every SharedStore value and field of the
//	                    crawl (redis_shared.go): a Claim must see every
//	                    other Claim of its name, so all live in one slot
const maxPartitions = 1024

// newPartitionKeys returns the keys of partition p of a crawl with n
// partitions; n = 1 is newCrawlKeys.
func newPartitionKeys(crawl string, p, n int) crawlKeys {
	if n <= 1 {
		return newCrawlKeys(crawl)
	}
	lo, hi := p*slots/n, (p+1)*slots/n
	for k := 0; ; k++ {
		tag := crawl + "/" + strconv.Itoa(p) + "." + strconv.Itoa(k)
		if s := int(keySlot(tag)); s >= lo && s < hi {
			return newCrawlKeysTag(tag)
		}
	}
}

// partitionsRecord is the key that records a partitioned crawl's P.
func partitionsRecord(crawl string) string { return newCrawlKeys(crawl).prefix + sfxPartitions }

func (k crawlKeys) outbox() string { return k.prefix + sfxOutbox }

func (k crawlKeys) outboxItems() string { return k.prefix + sfxOutboxItems }

func (k crawlKeys) grantLock() string { return k.prefix + sfxGrantLock }

func (k crawlKeys) overflow() string { return k.prefix + sfxOverflow }

func (k crawlKeys) overflowIDs() string { return k.prefix + sfxOverflowIDs }

func (k crawlKeys) splitLock() string { return k.prefix + sfxSplitLock }

// slots is the number of Redis Cluster hash slots.
const slots = 16384

// keySlot is Redis Cluster's slot of a hash tag: CRC16 (XMODEM) mod 16384.
func keySlot(tag string) uint16 {
	var crc uint16
	for i := 0; i < len(tag); i++ {
		crc ^= uint16(tag[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % slots
}
