package config

import "testing"

// FuzzParse: no input makes Parse panic, and whatever it accepts survives a
// Marshal round trip.
func FuzzParse(f *testing.F) {
	for _, s := range []string{minimal, full, idCrawl, "crawl: x\nfetch: {max_body: 1.5GiB}\n",
		"a: &a [*a]\n", "fetch: &f\n  <<: *f\n", "crawl: ${X}\n", "- [\n", "crawl: x\n---\n"} {
		f.Add([]byte(s))
	}
	env := envOf(testEnv)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parse(data, "fuzz.yaml", env)
		if err != nil {
			return
		}
		out, err := Marshal(c)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		if _, err := parse(out, "again.yaml", env); err != nil {
			t.Fatalf("re-parse of accepted config failed: %v\n%s", err, out)
		}
	})
}
