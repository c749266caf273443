package config

import (
	"strings"
	"testing"
)

func TestRedacted(t *testing.T) {
	t.Parallel()
	c, err := parse([]byte(full), "full.yaml", envOf(testEnv))
	if err != nil {
		t.Fatal(err)
	}
	c.Saver.Endpoint = "https://s3.example.org/?X-Amz-Signature=abc&region=eu"
	c.Scraper.Seeds = append(c.Scraper.Seeds, "https://bob:hunter2@example.org/?token=t0k")
	r := c.Redacted()
	out, err := Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"s3cret", "tok123", "p@proxy", "abc", "hunter2", "t0k"} {
		if strings.Contains(string(out), secret) {
			t.Errorf("redacted config shows %q:\n%s", secret, out)
		}
	}
	for _, kept := range []string{"redis://user:xxxxx@redis.internal:6379/0", "Accept-Language: en", "region=eu", "bob:xxxxx@example.org"} {
		if !strings.Contains(string(out), kept) {
			t.Errorf("redacted config lost %q:\n%s", kept, out)
		}
	}
	if c.Tracker.URL != "redis://user:s3cret@redis.internal:6379/0" || c.Fetch.Headers["Authorization"] != "Bearer tok123" {
		t.Error("Redacted changed the original")
	}
}

// TestErrorsHideSecrets: a bad URL's error never repeats its password.
func TestErrorsHideSecrets(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"http://u:hunter2@h:6379", "redis://u:hunter2@h:99999", "redis://u:hunter2@h:6379/db", "redis://u:hunter2@h\x7f:1"} {
		_, err := parse([]byte("crawl: x\ntracker: {kind: redis, url: '"+u+"'}\n"), "c.yaml", envOf(nil))
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: error %v", u, err)
		}
	}
}
