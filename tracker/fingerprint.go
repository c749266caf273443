package tracker

import (
	"math"

	"github.com/cespare/xxhash/v2"
)

// Fingerprint is the fixed-size identity of a string item, used for dedup in
// place of the key itself (a set of full URLs costs ~100 B per item).
//
// It is two independent 64-bit xxhash values, 128 bits in all: among 10^9
// distinct items the odds that any two collide are about n²/2^129 ≈ 1.5e-21,
// so dedup is exact in practice. It is stable across processes and versions,
// so it may be persisted (journal, Redis).
type Fingerprint struct{ Hi, Lo uint64 }

// fingerprintSeed makes Lo independent of Hi (the golden ratio, a common
// arbitrary seed).
const fingerprintSeed = 0x9E3779B97F4A7C15

// FingerprintOf returns the fingerprint of key.
func FingerprintOf(key string) Fingerprint {
	var d xxhash.Digest
	d.ResetWithSeed(fingerprintSeed)
	_, _ = d.WriteString(key) // never fails
	return Fingerprint{Hi: xxhash.Sum64String(key), Lo: d.Sum64()}
}

// NumericID reports whether key is a canonical decimal uint64 ("0", "7",
// "18446744073709551615") and returns its value. Such keys can be deduplicated
// in a bitmap; anything else ("007", "-5", "1e3", a number past 2^64-1) is a
// plain string, distinct from its numeric look-alike.
func NumericID(key string) (uint64, bool) {
	if len(key) == 0 || len(key) > 20 || (key[0] == '0' && len(key) > 1) {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false // overflow: a plain string
		}
		n = n*10 + d
	}
	return n, true
}
