package driver

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Size
		err  string
	}{
		{"512", 512, ""},
		{"0", 0, ""},
		{"1_000", 1000, ""},
		{"10MB", 10_000_000, ""},
		{"10mb", 10_000_000, ""},
		{"64MiB", 64 << 20, ""},
		{"64 MiB", 64 << 20, ""},
		{"1.5GiB", 3 << 29, ""},
		{"0.5KiB", 512, ""},
		{"1.1B", 1, ""},
		{"2kB", 2000, ""},
		{"1TiB", 1 << 40, ""},
		{"", 0, "invalid size"},
		{"-5", 0, "invalid size"},
		{"MiB", 0, "invalid size"},
		{"5 parsecs", 0, `unknown unit "parsecs"`},
		{"1.2.3MB", 0, "invalid size"},
		{"99999999999TiB", 0, "too large"},
		{"99999999999999999999", 0, "too large"},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseSize(%q) = %v, %v; want error %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		back, err := ParseSize(got.String())
		if err != nil || back != got {
			t.Errorf("ParseSize(%v.String() = %q) = %v, %v", got, got.String(), back, err)
		}
	}
}
