package redistracker

import (
	"crypto/sha1"
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/distscrape/distscrape/tracker"
)

// The wire format's bytes, named once. Each has a twin of the name in the
// comment at the top of lua/lib; TestWireConstantsAgree checks them.
const (
	// Tags: the first byte of a pending entry (lua/lib documents the forms).
	tagRun       = 1 // TAG_RUN: "lo:hi", IDs < 2^40 already marked seen
	tagRange     = 2 // TAG_RANGE: "lo:hi", IDs < 2^40 of AddRange
	tagItem      = 3 // TAG_ITEM: "depth:attempts:key", any item
	tagHugeRange = 4 // TAG_HUGE_RANGE: "lo:hi", IDs >= 2^40 of AddRange
	tagExt       = 5 // TAG_EXT: "depth:attempts:meta;key", an item with meta
	tagNamed     = 6 // TAG_NAMED: tagExt with label names, in add arguments only
	tagRevisit   = 7 // TAG_REVISIT: a revisit header before an entry (redis_revisit.go)
	tagMax       = 7 // TAG_MAX: a bare key's first byte is above it

	// Meta flags (lua/lib: meta's f field).
	flagValidators = 1 // FLAG_VALIDATORS: validators are kept for the key

	starveEvery = tracker.StarveEvery // STARVE_EVERY

	// Error codes: the first word of a script's error reply.
	codeStateLost = "STATELOST" // STATE_LOST_CODE: the crawl record is gone or replaced (check_crawl)
)

// appendItem appends the 3 script arguments of it to args (lua/lib,
// add_item): a numeric ID below 2^40 and "" (bitmap dedup), or the two
// parts of its fingerprint for anything else, x in hex (Lua reads it with
// strtoul, where a decimal goes through strtod's multi-precision path);
// then its pending entry. Three, not four with a kind: each argument is a
// Lua string redis-server makes.
func (r *Tracker) appendItem(args []any, it tracker.Item) []any {
	e := pendingEntry(it.Key, it.Depth, 0)
	if it.Priority != 0 || len(it.Labels) > 0 {
		e = namedEntry(it)
	}
	id, numeric := tracker.NumericID(it.Key)
	if numeric && id < hugeID {
		return append(args, it.Key, "", e)
	}
	fp := tracker.FingerprintOf(it.Key)
	if numeric {
		// The checkout script fingerprints the huge IDs it carves from a
		// range itself, with SHA-1 (redis.sha1hex): both must agree.
		fp = hugeFingerprint(it.Key)
	}
	x, m := fpParts(fp, r.fpBase)
	return append(args, strconv.FormatUint(x, 16), strconv.FormatInt(m, 10), e)
}

// pendingEntry is the compact form of an item in the pending list: the bare
// key when depth and attempts are 0 (and its first byte cannot be taken for
// a tag), else tagItem "depth:attempts:key".
func pendingEntry(key string, depth, attempts int) string {
	if depth == 0 && attempts == 0 && key[0] > tagMax {
		return key
	}
	return string(rune(tagItem)) + strconv.Itoa(depth) + ":" + strconv.Itoa(attempts) + ":" + key
}

// namedEntry is the add argument of an item with a priority or labels:
// tagNamed "depth:0:meta;key", meta "p:l" with the label names ','-joined
// (ValidateLabel's names hold no ',', ':' or ';'); add_item stores it as
// tagExt with the label IDs of the crawl's table.
func namedEntry(it tracker.Item) string {
	return string(rune(tagNamed)) + strconv.Itoa(it.Depth) + ":0:" +
		encodeMeta(meta{priority: it.Priority, labels: it.Labels}) + ";" + it.Key
}

// meta is what an item carries beyond key, depth and attempts (lua/lib).
type meta struct {
	priority int
	labels   []string // names
	visits   int
	flags    int
}

// encodeMeta writes m as "p:l:v:f", trailing zero fields left out.
func encodeMeta(m meta) string {
	f := []string{strconv.Itoa(m.priority), strings.Join(m.labels, ","), strconv.Itoa(m.visits), strconv.Itoa(m.flags)}
	n := len(f)
	for n > 0 && (f[n-1] == "" || n != 2 && f[n-1] == "0") { // a label may be named 0
		n--
	}
	return strings.Join(f[:n], ":")
}

// decodeMeta parses what the scripts return (lua/lib: meta_out): "" for
// none, else "p:names:v:f" with fields possibly missing; fields after
// these are ignored.
func decodeMeta(s string) meta {
	var m meta
	if s == "" {
		return m
	}
	f := strings.Split(s, ":")
	m.priority, _ = strconv.Atoi(f[0])
	if len(f) > 1 && f[1] != "" {
		m.labels = strings.Split(f[1], ",")
	}
	if len(f) > 2 {
		m.visits, _ = strconv.Atoi(f[2])
	}
	if len(f) > 3 {
		m.flags, _ = strconv.Atoi(f[3])
	}
	return m
}

// splitMeta undoes lua/lib's with_meta on what a script returned: the value
// and its meta.
func splitMeta(v string) (string, meta) {
	if !strings.HasPrefix(v, "+") {
		return v, meta{}
	}
	ms, rest, _ := strings.Cut(v[1:], ";")
	return rest, decodeMeta(ms)
}

// rangeEntry is the pending entry of the IDs lo..hi under tag (tagRange or
// tagHugeRange).
func rangeEntry(tag byte, lo, hi uint64) string {
	return string(rune(tag)) + strconv.FormatUint(lo, 10) + ":" + strconv.FormatUint(hi, 10)
}

// hugeFingerprint is the fingerprint of a numeric ID >= 2^40: SHA-1 of its
// decimal string, the first two 64-bit big-endian words.
func hugeFingerprint(key string) tracker.Fingerprint {
	h := sha1.Sum([]byte(key))
	return tracker.Fingerprint{Hi: binary.BigEndian.Uint64(h[0:8]), Lo: binary.BigEndian.Uint64(h[8:16])}
}

// fpParts splits a fingerprint into what the scripts store: x, the low 40
// bits of Hi, which pick the bucket, and the member, 64 bits of Lo:Hi from
// bit base on (see keys.go).
func fpParts(fp tracker.Fingerprint, base uint) (x uint64, member int64) {
	return fp.Hi & (1<<40 - 1), int64(fp.Hi>>base | fp.Lo<<(64-base))
}

// leaseRecord is the record checkout.lua keeps for the lease l (lua/lib's
// record: "attempts:depth:#worker:<worker><key>"). complete.lua takes a
// lease whose stored record equals it as held with one comparison.
func leaseRecord(l tracker.Lease) string {
	hdr := revisitHeader(l.Key, l.Visits, l.Validators) // "" for a first visit
	return strconv.Itoa(l.Attempts) + ":" + strconv.Itoa(l.Depth) + ":" + strconv.Itoa(len(l.Worker)) + ":" + l.Worker + hdr + l.Key
}
