package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver/s3saver"
)

func TestRedacted(t *testing.T) {
	t.Parallel()
	c, err := parse([]byte(full), "full.yaml", envOf(testEnv))
	if err != nil {
		t.Fatal(err)
	}
	c.Saver = Saver{Kind: "s3", Driver: &s3saver.Section{Bucket: "b", Endpoint: "https://s3.example.org/?X-Amz-Signature=abc&region=eu"}}
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
	for _, kept := range []string{"redis://xxxxx@redis.internal:6379/0", "Accept-Language: en", "region=eu", "https://xxxxx@example.org"} {
		if !strings.Contains(string(out), kept) {
			t.Errorf("redacted config lost %q:\n%s", kept, out)
		}
	}
	if c.Key("tracker.url") != "redis://user:s3cret@redis.internal:6379/0" || c.Key("saver.endpoint") != "https://s3.example.org/?X-Amz-Signature=abc&region=eu" || c.Fetch.Headers["Authorization"] != "Bearer tok123" {
		t.Error("Redacted changed the original")
	}
}

// TestErrorsHideSecrets: an error about a URL never shows its user
// information, parsed or not, whichever key or variable holds the URL and
// whichever character of the password ends the host early.
func TestErrorsHideSecrets(t *testing.T) {
	t.Parallel()
	sources := []struct {
		name string
		yaml func(u string) string // the config; "" = the URL is in env
		env  string
	}{
		{"tracker.url", func(u string) string { return "tracker: {kind: redis, url: '" + u + "'}\n" }, ""},
		{"saver.url", func(u string) string { return "saver: {kind: redis, url: '" + u + "'}\n" }, ""},
		{"fetch.proxies", func(u string) string { return "fetch: {proxies: ['" + u + "']}\n" }, ""},
		{"DISTSCRAPE_TRACKER_URL", func(string) string { return "tracker: {kind: redis}\n" }, "DISTSCRAPE_TRACKER_URL"},
		{"records.url", func(u string) string { return oneRule + "records: {kind: postgres, url: '" + u + "'}\n" }, ""},
		{"DISTSCRAPE_RECORDS_URL", func(string) string { return oneRule + "records: {kind: postgres}\n" }, "DISTSCRAPE_RECORDS_URL"},
		{"records.url mysql", func(u string) string { return oneRule + "records: {kind: mysql, url: '" + u + "'}\n" }, ""},
		{"DISTSCRAPE_RECORDS_URL mysql", func(string) string { return oneRule + "records: {kind: mysql}\n" }, "DISTSCRAPE_RECORDS_URL"},
	}
	spellings := []string{"hun#ter2", "hun/ter2", "hun?ter2", "hun@ter2", "hun ter2", "hunter2"}
	shapes := []string{"%s://u:%s@h:6379", "%s://u:%s@h:99999", "%s://u:%s@h\x7f:1", "%s://%s@h:1/x y"}
	for _, src := range sources {
		scheme := "redis"
		switch src.name {
		case "fetch.proxies":
			scheme = "http"
		case "records.url", "DISTSCRAPE_RECORDS_URL":
			scheme = "postgres"
		case "records.url mysql", "DISTSCRAPE_RECORDS_URL mysql":
			scheme = "mysql"
		}
		for _, pw := range spellings {
			for _, shape := range shapes {
				u := fmt.Sprintf(shape, scheme, pw)
				env := map[string]string{}
				if src.env != "" {
					env[src.env] = u
				}
				_, err := parse([]byte("crawl: x\nscraper: {kind: link, seeds: ['http://h/']}\n"+src.yaml(u)), "c.yaml", envOf(env))
				if err == nil {
					continue // a valid URL: nothing printed about it
				}
				if msg := err.Error(); strings.Contains(msg, "hun") || strings.Contains(msg, "ter2") {
					t.Errorf("%s = %q: error shows the password: %v", src.name, u, msg)
				}
			}
		}
	}
}

// TestEnvValuesAreSecrets: a value that came from ${VAR} is hidden in
// errors and in the redacted config wherever it sits, here a query
// parameter of download_url_fmt.
func TestEnvValuesAreSecrets(t *testing.T) {
	t.Parallel()
	env := envOf(map[string]string{"API_KEY": "k3y-s3cret"})
	good := "crawl: x\nscraper: {kind: id, seeds: ['1'], id_regex: 'x', download_url_fmt: 'http://h/{id}?api_key=${API_KEY}&sig=${API_KEY}'}\n"
	c, err := parse([]byte(good), "c.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Redacted().Scraper.DownloadURLFmt; strings.Contains(got, "k3y") {
		t.Errorf("redacted download_url_fmt %q", got)
	}
	if got := c.Redactor().String("GET http://h/1?a=k3y-s3cret"); strings.Contains(got, "k3y") {
		t.Errorf("Redactor().String: %q", got)
	}
	bad := "crawl: x\nscraper: {kind: id, seeds: ['1'], id_regex: 'x', download_url_fmt: 'http://h/?api_key=${API_KEY}'}\n"
	if _, err := parse([]byte(bad), "c.yaml", env); err == nil || strings.Contains(err.Error(), "k3y") {
		t.Errorf("error %v", err)
	}
}

// TestDashboardTokenIsSecret: dashboard.token, written in the file or from
// ${VAR}, is hidden by Redacted and by the config's Redactor.
func TestDashboardTokenIsSecret(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, yaml string }{
		{"literal", "crawl: x\nscraper: {seeds: ['https://example.org/']}\ndashboard: {token: d4shb0ard-t0ken-literal}\n"},
		{"variable", "crawl: x\nscraper: {seeds: ['https://example.org/']}\ndashboard: {token: '${DASH_TOKEN}'}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := parse([]byte(tc.yaml), "d.yaml", envOf(map[string]string{"DASH_TOKEN": "d4shb0ard-t0ken-from-env"}))
			if err != nil {
				t.Fatal(err)
			}
			tok := c.Dashboard.Token
			out, err := Marshal(c.Redacted())
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(out), tok) || !strings.Contains(string(out), "token: xxxxx") {
				t.Errorf("redacted config:\n%s", out)
			}
			if got := c.Redactor().String("a log line with " + tok); strings.Contains(got, tok) {
				t.Errorf("Redactor kept the token: %q", got)
			}
		})
	}
}
