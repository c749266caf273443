package driver

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Size is a byte count written with units in a config ("64MiB", "10MB",
// "512").
type Size int64

// Size units. Decimal (kB, MB, ...) and binary (KiB, MiB, ...) units are both
// accepted, case-insensitively: "64MiB", "10MB", "1.5GiB", "512".
const (
	KiB Size = 1 << 10
	MiB Size = 1 << 20
	GiB Size = 1 << 30
	TiB Size = 1 << 40
)

var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1000, "kb": 1000, "m": 1000 * 1000, "mb": 1000 * 1000,
	"g": 1000 * 1000 * 1000, "gb": 1000 * 1000 * 1000,
	"t": 1000 * 1000 * 1000 * 1000, "tb": 1000 * 1000 * 1000 * 1000,
	"ki": 1 << 10, "kib": 1 << 10, "mi": 1 << 20, "mib": 1 << 20,
	"gi": 1 << 30, "gib": 1 << 30, "ti": 1 << 40, "tib": 1 << 40,
}

// ParseSize parses a byte count with an optional unit. Fractions are allowed
// with a unit ("1.5GiB") and rounded down to whole bytes.
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.' || t[i] == '_') {
		i++
	}
	num, unit := strings.ReplaceAll(t[:i], "_", ""), strings.ToLower(strings.TrimSpace(t[i:]))
	if num == "" {
		return 0, fmt.Errorf("invalid size %q (want a byte count like 512, 10MB or 64MiB)", s)
	}
	mult, ok := sizeUnits[unit]
	if !ok {
		return 0, fmt.Errorf("invalid size %q: unknown unit %q (use B, kB, MB, GB, TB, KiB, MiB, GiB or TiB)", s, strings.TrimSpace(t[i:]))
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || (n != 0 && mult > math.MaxInt64/n) {
			return 0, fmt.Errorf("invalid size %q: too large", s)
		}
		return Size(n * mult), nil
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok || strings.Count(num, ".") > 1 {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	n := new(big.Int).Quo(r.Num(), r.Denom())
	if !n.IsInt64() {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return Size(n.Int64()), nil
}

// String formats s with the largest binary unit that divides it exactly, so
// ParseSize(s.String()) == s.
func (s Size) String() string {
	for _, u := range []struct {
		n    Size
		name string
	}{{TiB, "TiB"}, {GiB, "GiB"}, {MiB, "MiB"}, {KiB, "KiB"}} {
		if s != 0 && s%u.n == 0 {
			return strconv.FormatInt(int64(s/u.n), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(s), 10)
}

// MarshalText writes the size with units ("64MiB").
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a size with units, for flags and other decoders.
func (s *Size) UnmarshalText(b []byte) error {
	v, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
