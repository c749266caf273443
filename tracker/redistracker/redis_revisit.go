package redistracker

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/distscrape/distscrape/tracker"
)

// A revisit header (lua/lib, TAG_REVISIT) is what a revisited item
// carries through the revisit index, the pending list, delayed and its lease
// record: tagRevisit, the length n of its body, then n bytes only Go reads:
//
//	flags   1 byte: bit 0, the key is a numeric ID below 2^40 (stats' rvids)
//	visits  uvarint: the visits completed before the next one
//	lm      varint: Last-Modified in Unix seconds (0: none)
//	etag    the rest: the ETag as the server sent it (tracker.Validators.Kept)
//
// With a typical ETag of 15 bytes it is 2 + 1 + 1 + 5 + 15 = 24 bytes.

// revisitHeader encodes the header of key's next visit; "" when it needs
// none (a first visit without validators).
func revisitHeader(key string, visits int, v tracker.Validators) string {
	v = v.Kept()
	if visits == 0 && v.IsZero() {
		return ""
	}
	var lm int64
	if t, ok := v.LastModifiedTime(); ok {
		lm = t.Unix()
	}
	body := make([]byte, 1, 16+len(v.ETag))
	if id, ok := tracker.NumericID(key); ok && id < hugeID {
		body[0] = 1
	}
	body = binary.AppendUvarint(body, uint64(visits))
	body = binary.AppendVarint(body, lm)
	body = append(body, v.ETag...)
	return string([]byte{tagRevisit, byte(len(body))}) + string(body)
}

// parseRevisitHeader decodes a header from checkout ("" is a first visit).
func parseRevisitHeader(h string) (visits int, v tracker.Validators, err error) {
	if h == "" {
		return 0, tracker.Validators{}, nil
	}
	if len(h) < 3 || h[0] != tagRevisit || int(h[1]) != len(h)-2 {
		return 0, v, fmt.Errorf("tracker: redis: malformed revisit header %q", h)
	}
	b := []byte(h[3:])
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, v, fmt.Errorf("tracker: redis: malformed revisit header %q", h)
	}
	b = b[k:]
	lm, k := binary.Varint(b)
	if k <= 0 {
		return 0, v, fmt.Errorf("tracker: redis: malformed revisit header %q", h)
	}
	return int(n), tracker.ValidatorsOf(string(b[k:]), lm), nil
}

// plainVisit says c is a first visit not filed for a revisit (most): its
// revisitArg is "".
func plainVisit(c tracker.Completion) bool {
	return !c.Unchanged && c.Revisit <= 0 && c.Lease.Visits == 0
}

// revisitArg is complete.lua's revisit argument of c: "" for a plain visit
// (plainVisit), else 'u' (a 304) or '-', the revisit in ms (0: none), ':'
// and the header of the next visit.
func revisitArg(c tracker.Completion) string {
	if plainVisit(c) {
		return ""
	}
	flag := "-"
	if c.Unchanged {
		flag = "u"
	}
	if c.Revisit <= 0 {
		return flag + "0:"
	}
	ms := max(c.Revisit.Milliseconds(), 1)
	return flag + strconv.FormatInt(ms, 10) + ":" + revisitHeader(c.Lease.Key, c.Lease.Visits+1, tracker.NextValidators(c))
}

// stripRevisit returns e without its revisit header, if it has one (a
// malformed one leaves "").
func stripRevisit(e string) string {
	if len(e) == 0 || e[0] != tagRevisit {
		return e
	}
	if len(e) < 2 || len(e) < 2+int(e[1]) {
		return ""
	}
	return e[2+int(e[1]):]
}
