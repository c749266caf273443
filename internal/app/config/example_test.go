package config_test

import (
	"errors"
	"fmt"

	"github.com/distscrape/distscrape/internal/app/config"
)

func ExampleParse() {
	_, err := config.Parse([]byte(`
crawl: example
tracker:
  lease_tll: 5m
scraper:
  seeds: ["https://example.org/"]
  link_regex: 'href="([^"]+"'
`), "crawl.yaml")
	fmt.Println(errors.Is(err, config.ErrInvalid))
	fmt.Println(err)
	// Output:
	// true
	// tracker.lease_tll: unknown key (did you mean lease_ttl?) (crawl.yaml:4)
	// scraper.link_regex: missing closing ) (crawl.yaml:7)
}

func ExampleConfig_Redacted() {
	cfg, err := config.Parse([]byte(`
crawl: fleet
tracker: {kind: redis, url: "redis://worker:hunter2@10.0.0.5:6379/0"}
scraper: {scope: {hosts: [example.org]}}
fetch: {headers: {Authorization: "Bearer abc"}}
`), "fleet.yaml")
	if err != nil {
		panic(err)
	}
	r := cfg.Redacted()
	fmt.Println(r.Key("tracker.url"))
	fmt.Println(r.Fetch.Headers["Authorization"])
	// Output:
	// redis://xxxxx@10.0.0.5:6379/0
	// xxxxx
}

func ExampleEnvVar() {
	fmt.Println(config.EnvVar("fetch.per_host_concurrency"))
	// Output: DISTSCRAPE_FETCH_PER_HOST_CONCURRENCY
}
