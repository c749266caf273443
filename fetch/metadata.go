package fetch

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// ec2IPv6Metadata is AWS's IPv6 instance metadata address.
var ec2IPv6Metadata = netip.MustParseAddr("fd00:ec2::254")

// alibabaMetadata is Alibaba Cloud's metadata address (outside 169.254/16).
var alibabaMetadata = netip.MustParseAddr("100.100.100.200")

// The IPv6 prefixes that carry an IPv4 address a gateway or relay will
// reach: NAT64's well-known prefix (RFC 6052) and its local-use block
// (RFC 8215), SIIT's translated addresses (RFC 2765), 6to4 (RFC 3056),
// Teredo (RFC 4380).
var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	siit       = netip.MustParsePrefix("::ffff:0:0:0/96")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	teredo     = netip.MustParsePrefix("2001::/32")
)

// metadataNames are host names that resolve to a metadata address inside a
// cloud; through a proxy, which resolves them itself, only the name can be
// refused.
var metadataNames = map[string]bool{
	"metadata.google.internal":   true,
	"metadata.goog":              true,
	"instance-data":              true,
	"instance-data.ec2.internal": true,
}

// isMetadata reports whether a is a cloud metadata address: IPv4 link-local
// 169.254.0.0/16 (AWS, GCP, Azure, ...), 100.100.100.200 (Alibaba) or
// fd00:ec2::254, also when an IPv6 address embeds one (see embeddedIPv4).
func isMetadata(a netip.Addr) bool {
	a = a.WithZone("").Unmap()
	if a.Is4() {
		return isMetadata4(a)
	}
	for _, v4 := range embeddedIPv4(a) {
		if isMetadata4(v4) {
			return true
		}
	}
	return a == ec2IPv6Metadata
}

func isMetadata4(a netip.Addr) bool {
	b := a.As4()
	return b[0] == 169 && b[1] == 254 || a == alibabaMetadata
}

// embeddedIPv4 returns the IPv4 addresses an IPv6 address a can stand for
// on the way to its destination: compatible ::a.b.c.d, SIIT
// ::ffff:0:a.b.c.d, NAT64 under 64:ff9b::/96 and under 64:ff9b:1::/48 at
// every prefix length RFC 6052 allows there (48, 56, 64, 96), 6to4
// 2002:AABB:CCDD::, Teredo's server and (obfuscated) client, and an ISATAP
// interface identifier (::5efe:a.b.c.d, ::200:5efe:a.b.c.d).
func embeddedIPv4(a netip.Addr) []netip.Addr {
	b := a.As16()
	v4 := func(p []byte) netip.Addr { return netip.AddrFrom4([4]byte(p)) }
	var out []netip.Addr
	switch {
	case [12]byte(b[:12]) == [12]byte{}, nat64.Contains(a), siit.Contains(a):
		out = append(out, v4(b[12:]))
	case nat64Local.Contains(a):
		// RFC 6052 section 2.2: bits 64-71 (byte 8) are always zero, so an
		// address spans it when the prefix is shorter than /64.
		out = append(out,
			v4([]byte{b[6], b[7], b[9], b[10]}),  // /48
			v4([]byte{b[7], b[9], b[10], b[11]}), // /56
			v4(b[9:13]),                          // /64
			v4(b[12:]))                           // /96
	case sixToFour.Contains(a):
		out = append(out, v4(b[2:6]))
	case teredo.Contains(a):
		out = append(out, v4(b[4:8]), v4([]byte{^b[12], ^b[13], ^b[14], ^b[15]}))
	}
	if (b[8]|0x02) == 0x02 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe {
		out = append(out, v4(b[12:]))
	}
	return out
}

// literalMetadata reports whether u names a metadata address, in any
// spelling a resolver or a proxy would accept (see hostAddr), or a
// well-known metadata name. It is checked before a request, so that it
// holds through a proxy too, which resolves and dials on our behalf.
func literalMetadata(u *url.URL) bool {
	h := u.Hostname()
	if d, err := url.PathUnescape(h); err == nil {
		h = d
	}
	h = strings.ToLower(strings.TrimRight(h, "."))
	if metadataNames[h] {
		return true
	}
	a, ok := hostAddr(h)
	return ok && isMetadata(a)
}

// hostAddr parses h (no brackets, no trailing dot) as an IP address: IPv6
// with or without a zone, or IPv4 in any form inet_aton(3) and the WHATWG
// URL parser accept.
func hostAddr(h string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(h); err == nil {
		return a, true
	}
	return parseIPv4Loose(h)
}

// parseIPv4Loose parses the IPv4 spellings resolvers accept besides the
// dotted quad: 1 to 4 parts, each decimal, octal (leading 0) or hex (0x),
// the last part filling the remaining bytes: 2852039166, 0xa9fea9fe,
// 0251.0376.0251.0376, 169.254.43518 and 0xa9.0xfe.0xa9.0xfe are all
// 169.254.169.254.
func parseIPv4Loose(h string) (netip.Addr, bool) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals [4]uint64
	for i, p := range parts {
		v, ok := parseIPv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	n := len(parts)
	var ip uint64
	for i := 0; i < n-1; i++ {
		if vals[i] > 0xff {
			return netip.Addr{}, false
		}
		ip |= vals[i] << (8 * (3 - i))
	}
	if last := vals[n-1]; last >= 1<<(8*(5-n)) {
		return netip.Addr{}, false
	} else {
		ip |= last
	}
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}

// parseIPv4Part parses one part: "0x" followed by hex digits (none: 0, as
// browsers read it), a leading "0" for octal, else decimal.
func parseIPv4Part(p string) (uint64, bool) {
	base := 10
	switch {
	case p == "":
		return 0, false
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	if p[0] == '+' || p[0] == '-' {
		return 0, false
	}
	v, err := strconv.ParseUint(p, base, 32)
	return v, err == nil
}

// IsMetadataURL reports whether u names a cloud metadata address or name,
// in any spelling the fetcher refuses (169.254.169.254 and its decimal,
// octal and hex forms, fd00:ec2::254, IPv6 forms embedding a metadata
// IPv4, metadata.google.internal, ...): for the other clients a crawl
// configures (notify webhooks), checked at config load.
func IsMetadataURL(u *url.URL) bool { return literalMetadata(u) }
