package tracker

import (
	"strconv"
	"testing"
	"time"
)

func TestNumericID(t *testing.T) {
	tests := []struct {
		key  string
		want uint64
		ok   bool
	}{
		{"0", 0, true},
		{"7", 7, true},
		{"18446744073709551615", 18446744073709551615, true},
		{"18446744073709551616", 0, false}, // 2^64: too large
		{"99999999999999999999", 0, false},
		{"007", 0, false},
		{"00", 0, false},
		{"-5", 0, false},
		{"+5", 0, false},
		{"abc", 0, false},
		{"1e3", 0, false},
		{"", 0, false},
		{"123456789012345678901", 0, false},
	}
	for _, tt := range tests {
		got, ok := NumericID(tt.key)
		if got != tt.want || ok != tt.ok {
			t.Errorf("NumericID(%q) = %d, %v; want %d, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFingerprintDistinctAndStable(t *testing.T) {
	// The values are pinned: a fingerprint may be persisted, so it must
	// never change between versions.
	want := Fingerprint{Hi: 0x52857536d7a3817b, Lo: 0x542f2a084f143fdc}
	if got := FingerprintOf("https://example.org/"); got != want {
		t.Fatalf("FingerprintOf changed: %#v, want %#v", got, want)
	}
	seen := make(map[Fingerprint]string, 100000)
	for i := range 100000 {
		k := "https://example.org/page/" + strconv.Itoa(i)
		fp := FingerprintOf(k)
		if fp.Hi == fp.Lo {
			t.Fatalf("halves equal for %q: the two hashes are not independent", k)
		}
		if prev, dup := seen[fp]; dup {
			t.Fatalf("collision: %q and %q", prev, k)
		}
		seen[fp] = k
	}
}

func TestBackoffBounds(t *testing.T) {
	o := Options{BackoffBase: 10e9, BackoffMax: 60e9}
	tests := []struct {
		attempt int
		lo, hi  int64
	}{
		{0, 5e9, 10e9}, {1, 5e9, 10e9}, {2, 10e9, 20e9}, {3, 20e9, 40e9}, {4, 30e9, 60e9}, {100, 30e9, 60e9},
	}
	for _, tt := range tests {
		lo, hi := o.BackoffBounds(tt.attempt)
		if int64(lo) != tt.lo || int64(hi) != tt.hi {
			t.Errorf("attempt %d: got [%v, %v], want [%v, %v]", tt.attempt, lo, hi, tt.lo, tt.hi)
		}
		for range 200 {
			if d := o.Backoff(tt.attempt, 0); d < lo || d > hi {
				t.Fatalf("attempt %d: Backoff = %v outside [%v, %v]", tt.attempt, d, lo, hi)
			}
		}
		// Retry-After is a floor, past BackoffMax too, up to MaxRetryAfter
		// (the default hour here).
		if d := o.Backoff(tt.attempt, 2*hi); d != 2*hi {
			t.Errorf("attempt %d: Retry-After %v: %v, want it honoured", tt.attempt, 2*hi, d)
		}
		if d := o.Backoff(tt.attempt, 24*time.Hour); d != DefaultMaxRetryAfter {
			t.Errorf("attempt %d: Retry-After 24h: %v, want MaxRetryAfter %v", tt.attempt, d, DefaultMaxRetryAfter)
		}
	}
}
