package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// nested writes "a.b.c: v" as YAML mappings; the first skip segments are
// already open in the document.
func nested(path, v string, skip int) string {
	var b strings.Builder
	for i, k := range strings.Split(path, ".")[skip:] {
		b.WriteString("\n" + strings.Repeat("  ", i+skip) + k + ":")
	}
	return b.String() + " " + v + "\n"
}

// TestExplicitZeroRefused: every key whose zero only means "the default" is
// refused when a zero is written, in the file or the environment, in each
// spelling of zero; omitted, it takes its default.
func TestExplicitZeroRefused(t *testing.T) {
	t.Parallel()
	const base = "crawl: x\nscraper:\n  seeds: ['http://127.0.0.1:1/']"
	for _, path := range zeroMeansDefault {
		var zeros []string
		switch defaultOf(path).(type) {
		case time.Duration:
			zeros = []string{"0", "0s", "0ms", "'0s'"}
		case Size:
			zeros = []string{"0", "0B", "0KiB", "'0'"}
		default:
			zeros = []string{"0", "00", "'0'"}
		}
		for _, z := range zeros {
			src := base + nested(path, z, 0)
			switch {
			case strings.HasPrefix(path, "scraper."):
				src = base + nested(path, z, 1)
			case path == "saver.concurrency":
				src = base + "\nsaver:\n  kind: s3\n  bucket: b" + nested(path, z, 1)
			}
			_, err := parse([]byte(src), "c.yaml", envOf(nil))
			if err == nil || !strings.Contains(err.Error(), path+": 0 is not a valid setting") {
				t.Errorf("%s: %s in the file: %v\n%s", path, z, err, src)
			}
		}
		_, err := parse([]byte(base+"\n"), "c.yaml", envOf(map[string]string{EnvVar(path): "0"}))
		if err == nil || !strings.Contains(err.Error(), path+": 0 is not a valid setting") {
			t.Errorf("%s=0: %v", EnvVar(path), err)
		}
		cfg, err := parse([]byte(base+"\n"), "c.yaml", envOf(nil))
		if err != nil {
			t.Fatal(err)
		}
		if got := fieldByPath(reflect.ValueOf(cfg).Elem(), path); got.IsZero() && path != "saver.concurrency" && !strings.HasPrefix(path, "records.") && !strings.HasPrefix(path, "notify.") {
			t.Errorf("%s omitted: still zero, want the default", path)
		}
	}
}
