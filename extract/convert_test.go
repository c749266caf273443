package extract

import (
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/record"
)

func TestConvertGood(t *testing.T) {
	base, _ := url.Parse("http://shop.test/a/b/page.html?q=1")
	day := time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	cases := []struct {
		t    record.Type
		in   string
		want any
	}{
		{record.String, "  spaced  ", "spaced"},
		{record.String, "x\u00a0", "x"},
		// Text every sink stores: NUL and invalid UTF-8 become U+FFFD.
		{record.String, "a\x00b", "a\ufffdb"},
		{record.String, "\x00", "\ufffd"},
		{record.String, "caf\xe9", "caf\ufffd"},
		{record.String, "a\xc3", "a\ufffd"},
		{record.URL, "/p?q=\x00", "http://shop.test/p?q=\ufffd"},
		{record.Time, "0001-01-01T00:00:00Z", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{record.Time, "9999-12-31T23:59:59Z", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)},

		// int: plain, signs, thousands separators of each kind, currency
		// before and after, zero fractions.
		{record.Int, "42", int64(42)},
		{record.Int, " +42 ", int64(42)},
		{record.Int, "-42", int64(-42)},
		{record.Int, "\u221242", int64(-42)},
		{record.Int, "1,234", int64(1234)},
		{record.Int, "1,234,567", int64(1234567)},
		{record.Int, "1.234.567", int64(1234567)},
		{record.Int, "1.000", int64(1000)},
		{record.Int, "1 234", int64(1234)},
		{record.Int, "1\u00a0234", int64(1234)},
		{record.Int, "1\u202f234", int64(1234)},
		{record.Int, "1'234", int64(1234)},
		{record.Int, "1_234", int64(1234)},
		{record.Int, "$12", int64(12)},
		{record.Int, "12 €", int64(12)},
		{record.Int, "USD 1,200", int64(1200)},
		{record.Int, "1200 EUR", int64(1200)},
		{record.Int, "-$5", int64(-5)},
		{record.Int, "12.00", int64(12)},
		{record.Int, "12,0", int64(12)},
		{record.Int, "9223372036854775807", int64(math.MaxInt64)},

		// float: decimal point or comma, both orders, currencies, Go syntax.
		{record.Float, "12.50", 12.5},
		{record.Float, "$12.50", 12.5},
		{record.Float, "12,50 €", 12.5},
		{record.Float, "€12,50", 12.5},
		{record.Float, "£ 0.99", 0.99},
		{record.Float, "¥1,000", 1000.0},
		{record.Float, "1,234.50", 1234.5},
		{record.Float, "1.234,50", 1234.5},
		{record.Float, "1 234,50", 1234.5},
		{record.Float, "1,234", 1234.0},
		{record.Float, "1.234", 1.234},
		{record.Float, "1,5", 1.5},
		{record.Float, "-0.5", -0.5},
		{record.Float, ".5", 0.5},
		{record.Float, "1.5e3", 1500.0},
		{record.Float, "1E-2", 0.01},
		{record.Float, "EUR 3,99", 3.99},
		{record.Float, "3.99 USD", 3.99},
		{record.Float, "7", 7.0},

		// bool: every word of the set, any case.
		{record.Bool, "true", true}, {record.Bool, "TRUE", true}, {record.Bool, "t", true},
		{record.Bool, "Yes", true}, {record.Bool, "y", true}, {record.Bool, "on", true}, {record.Bool, "1", true},
		{record.Bool, "false", false}, {record.Bool, "False", false}, {record.Bool, "f", false},
		{record.Bool, "NO", false}, {record.Bool, "n", false}, {record.Bool, "off", false}, {record.Bool, "0", false},

		// time: every layout, zones turned to UTC.
		{record.Time, "2026-03-04T05:06:07Z", at},
		{record.Time, "2026-03-04T07:06:07+02:00", at},
		{record.Time, "2026-03-04T05:06:07.250Z", at.Add(250 * time.Millisecond)},
		{record.Time, "2026-03-04T05:06:07", at},
		{record.Time, "2026-03-04T05:06", at.Add(-7 * time.Second)},
		{record.Time, "2026-03-04 05:06:07", at},
		{record.Time, "2026-03-04 05:06:07Z", at},
		{record.Time, "2026-03-04 05:06", at.Add(-7 * time.Second)},
		{record.Time, "2026-03-04", day},
		{record.Time, "Wed, 04 Mar 2026 05:06:07 GMT", at},
		{record.Time, "Wed, 04 Mar 2026 06:06:07 +0100", at},
		{record.Time, "Wed, 4 Mar 2026 05:06:07 GMT", at},
		{record.Time, "Wednesday, 04-Mar-26 05:06:07 GMT", at},
		{record.Time, "Wed Mar  4 05:06:07 2026", at},
		{record.Time, "March 4, 2026", day},
		{record.Time, "Mar 4, 2026", day},
		{record.Time, "4 March 2026", day},
		{record.Time, "4 Mar 2026", day},
		{record.Time, "1772600767", at},
		{record.Time, "1772600767.5", at.Add(500 * time.Millisecond)},

		// url: every relative form, resolved; absolute kept.
		{record.URL, "c.html", "http://shop.test/a/b/c.html"},
		{record.URL, "../c.html", "http://shop.test/a/c.html"},
		{record.URL, "/c.html", "http://shop.test/c.html"},
		{record.URL, "//cdn.test/i.png", "http://cdn.test/i.png"},
		{record.URL, "?page=2", "http://shop.test/a/b/page.html?page=2"},
		{record.URL, "#reviews", "http://shop.test/a/b/page.html?q=1#reviews"},
		{record.URL, "https://other.test/x", "https://other.test/x"},
		{record.URL, " my file.pdf ", "http://shop.test/a/b/my%20file.pdf"},
		{record.URL, "mailto:a@shop.test", "mailto:a@shop.test"},
	}
	for _, c := range cases {
		got, err := Convert(c.t, c.in, base)
		if err != nil {
			t.Errorf("Convert(%s, %q): %v", c.t, c.in, err)
			continue
		}
		if want, ok := c.want.(time.Time); ok {
			if g, _ := got.(time.Time); !g.Equal(want) || g.Location() != time.UTC {
				t.Errorf("Convert(%s, %q) = %v, want %v", c.t, c.in, got, want)
			}
			continue
		}
		if got != c.want {
			t.Errorf("Convert(%s, %q) = %#v, want %#v", c.t, c.in, got, c.want)
		}
		if err := record.Check(record.Field{Name: "f", Type: c.t}, got); err != nil {
			t.Errorf("Convert(%s, %q): %v", c.t, c.in, err)
		}
	}
}

func TestConvertBad(t *testing.T) {
	base, _ := url.Parse("http://shop.test/")
	long := strings.Repeat("9x", 100)
	cases := []struct {
		t   record.Type
		in  string
		why string // in the message, after the quoted value
	}{
		{record.Int, "abc", "is not an int"},
		// Years no sink stores, written every way a time is read.
		{record.Time, "0000-01-01", "year 0 is outside 1-9999"},
		{record.Time, "0000-06-01T12:00:00Z", "year 0 is outside 1-9999"},
		{record.Time, "0001-01-01T00:30:00+01:00", "year 0 is outside 1-9999"},
		{record.Time, "0000-01-01 10:00:00", "year 0 is outside 1-9999"},
		{record.Time, "-62135596801", "year 0 is outside 1-9999"},
		{record.Time, "253402300800", "year 10000 is outside 1-9999"},
		{record.Time, "Sat, 01 Jan 0000 00:00:00 GMT", "outside 1-9999"},
		{record.Int, "12 reviews", "is not an int"},
		{record.Int, "1.5", "fraction"},
		{record.Int, "12,5", "fraction"},
		{record.Int, "1e3", "is not an int"},
		{record.Int, "1,23,456", "out of place"},
		{record.Int, "12,34", "fraction"},
		{record.Int, "1,234.567,8", "two decimal separators"},
		{record.Int, "1 234,567.00", "mixed thousands separators"},
		{record.Int, ",123", "out of place"},
		{record.Int, "$", "is not an int"},
		{record.Int, "--5", "is not an int"},
		{record.Int, "99999999999999999999", "out of range"},
		{record.Int, "0x10", "is not an int"},
		{record.Float, "NaN", "is not a float"},
		{record.Float, "Inf", "is not a float"},
		{record.Float, "+Inf", "is not a float"},
		{record.Float, "-infinity", "is not a float"},
		{record.Float, "0x1p3", "is not a float"},
		{record.Float, "1e999", "is not a float"},
		{record.Float, "1.2.3,4", "out of place"},
		{record.Float, "1,234.5.6", "two decimal separators"},
		{record.Float, "twelve", "is not a float"},
		{record.Float, "12 34.5", "out of place"},
		{record.Bool, "in stock", "want true/false"},
		{record.Bool, "2", "want true/false"},
		{record.Bool, "yess", "want true/false"},
		{record.Bool, "oui", "want true/false"},
		{record.Time, "yesterday", "want RFC 3339"},
		{record.Time, "04/03/2026", "want RFC 3339"},
		{record.Time, "2026-13-01", "want RFC 3339"},
		{record.Time, "2026-02-30", "want RFC 3339"},
		{record.Time, "12-34", "want RFC 3339"},
		{record.Time, "99999999999999", "out of range for Unix seconds"},
		{record.Time, "99999999999999999999", "out of range for Unix seconds"},
		{record.Time, "1.2.3", "want RFC 3339"},
		{record.URL, "javascript:void(0)", "a javascript: URL"},
		{record.URL, "JavaScript:alert(1)", "a javascript: URL"},
		{record.URL, "data:text/html,hi", "a data: URL"},
		{record.URL, "vbscript:x", "a vbscript: URL"},
		{record.URL, "http://[::1", "is not a url"},
		{record.URL, "http:///nohost", "no host"},
		{record.Int, long, "…"},
	}
	for _, c := range cases {
		v, err := Convert(c.t, c.in, base)
		if err == nil {
			t.Errorf("Convert(%s, %q) = %#v, want an error", c.t, c.in, v)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.why) || !strings.HasPrefix(msg, `"`) {
			t.Errorf("Convert(%s, %q): %q, want the value quoted and %q", c.t, c.in, msg, c.why)
		}
		if len(msg) > 200 {
			t.Errorf("Convert(%s, %q): message of %d bytes: the value is not cut", c.t, c.in, len(msg))
		}
	}
	// A relative URL without a page to resolve it against.
	if _, err := Convert(record.URL, "/x", nil); err == nil || !strings.Contains(err.Error(), "not absolute") {
		t.Errorf("relative URL without base: %v", err)
	}
}
