package fetch

import (
	"errors"
	"net"
	"net/netip"
	"net/url"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/recorder"
)

// metadataSpellings is the class of ways to write a metadata address in a
// URL that a resolver or a proxy turns into that address.
var metadataSpellings = []string{
	"169.254.169.254",
	"2852039166",          // one decimal number
	"0xa9fea9fe",          // one hex number
	"0XA9FEA9FE",          // upper case
	"025177524776",        // one octal number
	"0251.0376.0251.0376", // octal parts
	"0xa9.0xfe.0xa9.0xfe", // hex parts
	"0xa9.254.0251.0xfe",  // mixed
	"169.254.43518",       // three parts
	"169.16689662",        // two parts
	"0251.0xfe.43518",     // three parts, mixed
	"169.254.169.254.",    // trailing dot (absolute DNS name)
	"0xa9fea9fe.",
	"169.254.1.1", // anywhere in 169.254.0.0/16
	"100.100.100.200",
	"[fd00:ec2::254]",
	"[fd00:0ec2:0000:0000:0000:0000:0000:0254]",
	"[FD00:EC2::254]",
	"[fd00:ec2::254%25eth0]",
	"[::ffff:169.254.169.254]",
	"[::ffff:a9fe:a9fe]",
	"[::169.254.169.254]",           // IPv4-compatible
	"[2002:a9fe:a9fe::1]",           // 6to4
	"[64:ff9b:1::a9fe:a9fe]",        // RFC 8215 local-use NAT64
	"[64:ff9b:1:a9fe:a9:fea9::]",    // the same, /48
	"[::ffff:0:a9fe:a9fe]",          // SIIT
	"[2001:0:a9fe:a9fe::]",          // Teredo server
	"[fe80::5efe:a9fe:a9fe%25eth0]", // ISATAP
	"[64:ff9b::169.254.169.254]",    // NAT64
	"metadata.google.internal",
	"METADATA.GOOGLE.INTERNAL.",
	"instance-data",
}

func TestParseIPv4Loose(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" = not an address
	}{
		{"2852039166", "169.254.169.254"},
		{"0xa9fea9fe", "169.254.169.254"},
		{"0251.0376.0251.0376", "169.254.169.254"},
		{"169.254.43518", "169.254.169.254"},
		{"0xa9.0xfe.0xa9.0xfe", "169.254.169.254"},
		{"127.1", "127.0.0.1"},
		{"0x", "0.0.0.0"},
		{"0", "0.0.0.0"},
		{"4294967295", "255.255.255.255"},
		{"4294967296", ""},
		{"256.1.1.1", ""},
		{"1.2.3.256", ""},
		{"1.2.65536", ""},
		{"1.2.3.4.5", ""},
		{"08", ""}, // not octal
		{"0x1g", ""},
		{"1..2", ""},
		{"", ""},
		{"+1", ""},
		{"-1", ""},
		{"1_000", ""},
		{"example.org", ""},
		{"1.2.3.example", ""},
	}
	for _, tt := range tests {
		a, ok := parseIPv4Loose(tt.in)
		got := ""
		if ok {
			got = a.String()
		}
		if got != tt.want {
			t.Errorf("parseIPv4Loose(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestMetadataSpellingsRefused sends every spelling of a metadata address
// directly and through a proxy: each is refused before any connection, and
// the proxy never hears of it. A spelling of another address goes through.
func TestMetadataSpellingsRefused(t *testing.T) {
	proxy := recorder.Start(t, nil) // a proxy that never forwards
	clients := map[string]*Client{
		"direct": newClient(t, Config{}),
		"proxy":  newClient(t, Config{Proxies: proxyURLs(proxy.URL)}),
	}
	for path, c := range clients {
		for _, host := range metadataSpellings {
			t.Run(path+"/"+host, func(t *testing.T) {
				_, err := get(t, c, "http://"+host+"/latest/meta-data/")
				o := outcome(t, err)
				if !o.Final() || o.Reason() != "metadata address" || !errors.Is(err, ErrMetadata) {
					t.Fatalf("%v: final=%v reason=%q, want the metadata refusal", err, o.Final(), o.Reason())
				}
				var oe *net.OpError
				if errors.As(err, &oe) {
					t.Errorf("%v: refused by the dialer, want refused before any connection", err)
				}
			})
		}
	}
	if seen := proxy.Seen(); len(seen) != 0 {
		t.Fatalf("the proxy received %v", seen)
	}
	// Not every odd spelling is refused: 2130706433 is 127.0.0.1, a
	// legitimate target, and it reaches the proxy.
	_, err := get(t, clients["proxy"], "http://2130706433/x")
	if o := outcome(t, err); o.Reason() != "http 502" {
		t.Fatalf("127.0.0.1 spelled 2130706433 through the proxy: %v, want the proxy's 502", err)
	}
	if seen := proxy.Seen(); len(seen) != 1 {
		t.Fatalf("the proxy received %v, want the one loopback request", seen)
	}
	// AllowMetadata lifts the refusal, for every spelling.
	u := "http://0xa9fea9fe/"
	allow := newClient(t, Config{AllowMetadata: true, Proxies: proxyURLs(proxy.URL)})
	if _, err := get(t, allow, u); errors.Is(err, ErrMetadata) {
		t.Fatalf("AllowMetadata: %v", err)
	}
}

func TestIsMetadata(t *testing.T) {
	for _, s := range []string{
		"169.254.169.254", "::ffff:169.254.169.254", "fd00:ec2::254", "100.100.100.200",
		"::169.254.169.254",                    // IPv4-compatible
		"::ffff:0:169.254.169.254",             // SIIT translated
		"64:ff9b::a9fe:a9fe",                   // NAT64 well-known prefix
		"64:ff9b::100.100.100.200",             // NAT64, Alibaba's address
		"64:ff9b:1:a9fe:a9:fea9::",             // RFC 8215 local-use NAT64, /48
		"64:ff9b:1:a9:fe:a9fe::",               // /56
		"64:ff9b:1::a9:fea9:fe00:0",            // /64
		"64:ff9b:1::a9fe:a9fe",                 // /96
		"2002:a9fe:a9fe::",                     // 6to4
		"2002:a9fe:a9fe:1:2:3:4:5",             // 6to4, any subnet and host
		"2001:0:a9fe:a9fe::",                   // Teredo, the server
		"2001:0:4136:e378:8000:63bf:5601:5601", // Teredo, client 169.254.169.254 obfuscated
		"fe80::5efe:a9fe:a9fe",                 // ISATAP, link-local
		"2001:db8::200:5efe:169.254.169.254",   // ISATAP, global interface ID
	} {
		if !isMetadata(netip.MustParseAddr(s)) {
			t.Errorf("isMetadata(%s) = false", s)
		}
	}
	for _, s := range []string{"127.0.0.1", "10.0.0.1", "::1", "fd00:ec2::253", "169.253.255.255", "::ffff:127.0.0.1", "100.100.100.201",
		"2002:7f00:1::", "64:ff9b:1::7f00:1", "2001:0:7f00:1::", "fe80::5efe:7f00:1", "2003:a9fe:a9fe::", "64:ff9b:2::a9fe:a9fe"} {
		if isMetadata(netip.MustParseAddr(s)) {
			t.Errorf("isMetadata(%s) = true", s)
		}
	}
}

// TestLiteralMetadataOddHosts: hosts url.Parse would refuse but a URL built
// in code can hold (percent-encoded, several trailing dots) are decoded
// before the check.
func TestLiteralMetadataOddHosts(t *testing.T) {
	for _, host := range []string{"%31%36%39.254.169.254", "%30%78a9fea9fe", "169.254.169.254..", "[fd00:ec2::254%25eth0]:80", "METADATA.goog."} {
		if u := (&url.URL{Scheme: "http", Host: host, Path: "/"}); !literalMetadata(u) {
			t.Errorf("literalMetadata(%q) = false", host)
		}
	}
	for _, host := range []string{"%31%32%37.0.0.1", "example.org", "169.254.169.254.example.org", "[::1]:80"} {
		if u := (&url.URL{Scheme: "http", Host: host, Path: "/"}); literalMetadata(u) {
			t.Errorf("literalMetadata(%q) = true", host)
		}
	}
}
