// Package storekit holds what several saver drivers share and no user of the
// contract needs: config errors, the KeepVersions setting, and a page's
// metadata as stores keep it.
package storekit

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/distscrape/distscrape/saver"
)

// ConfigErr is a constructor's error about the setting field; it wraps
// saver.ErrConfig.
func ConfigErr(field, format string, a ...any) error {
	return fmt.Errorf("%s: %s: %w", field, fmt.Sprintf(format, a...), saver.ErrConfig)
}

// KeepVersions checks a saver's KeepVersions (0: the default).
func KeepVersions(n int) (int, error) {
	switch {
	case n == 0:
		return saver.DefaultKeepVersions, nil
	case n < 0 || n > saver.MaxKeepVersions:
		return 0, ConfigErr("saver.keep_versions", "%d is out of range (1 to %d; 1 keeps the newest only)", n, saver.MaxKeepVersions)
	}
	return n, nil
}

// MetaHeaders returns p's saver.MetaHeaders that it has, by lower-case name
// (the key suffix under which the savers store them); nil when it has none.
func MetaHeaders(p *saver.Page) map[string]string {
	var m map[string]string
	for _, name := range saver.MetaHeaders {
		if v := p.Header.Get(name); v != "" {
			if m == nil {
				m = make(map[string]string, len(saver.MetaHeaders))
			}
			m[strings.ToLower(name)] = v
		}
	}
	return m
}

// MetaValue makes a value safe for an HTTP or WARC header (S3 metadata, the
// WARC saver's own fields): printable ASCII as it is, anything else as an
// RFC 2047 word, =?UTF-8?B?base64?=.
func MetaValue(v string) string {
	ok := !strings.HasPrefix(v, "=?")
	for i := 0; ok && i < len(v); i++ {
		ok = v[i] >= 0x20 && v[i] < 0x7f
	}
	if ok {
		return v
	}
	return "=?UTF-8?B?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// UnMetaValue reverses MetaValue.
func UnMetaValue(v string) string {
	if strings.HasPrefix(v, "=?UTF-8?B?") && strings.HasSuffix(v, "?=") {
		if b, err := base64.StdEncoding.DecodeString(v[10 : len(v)-2]); err == nil {
			return string(b)
		}
	}
	return v
}

// Visit is Page.Visit as a stored value: "" (left out) on a first visit.
func Visit(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}
