package config

import "reflect"

// zeroMeansDefault lists the keys whose zero value stands for "unset" (the
// default applies) and is never a setting of its own: 0 items per checkout,
// 0 attempts, a 0s timeout. Written explicitly, a zero would silently
// become the default, so it is refused instead.
var zeroMeansDefault = []string{
	"tracker.lease_ttl", "tracker.batch", "tracker.max_attempts",
	"tracker.heartbeat", "tracker.heartbeat_misses",
	"tracker.backoff.base", "tracker.backoff.max",
	"scraper.regex_timeout", "scraper.max_links",
	"fetch.concurrency", "fetch.per_host_concurrency", "fetch.timeout",
	"fetch.max_body", "fetch.max_redirects", "fetch.max_retry_after",
	"notify.dead_letter_rate.threshold", "notify.dead_letter_rate.window", "notify.summary_every",
	"notify.tracker_down_after", "notify.timeout", "notify.attempts", "notify.queue",
}

// checkExplicitZeros reports every key of zeroMeansDefault that the file or
// a DISTSCRAPE_* variable sets to zero. It runs before ApplyDefaults, when
// an omitted key and an explicit zero still look the same in the struct
// but not in the YAML (p.lines) or the environment.
func checkExplicitZeros(cfg *Config, p *problems, env lookupFunc) {
	root := reflect.ValueOf(cfg).Elem()
	for _, path := range zeroMeansDefault {
		if !fieldByPath(root, path).IsZero() {
			continue
		}
		_, fromEnv := env(EnvVar(path))
		if p.lines[path] == 0 && !fromEnv {
			continue // omitted: the default applies
		}
		p.add(path, "0 is not a valid setting; omit the key for the default (%v)", defaultOf(path))
	}
}

// defaultOf is the default of a key of zeroMeansDefault, for the message.
func defaultOf(path string) any {
	if d, ok := notifyDefault[path]; ok { // applied only to a notify section with a receiver
		return d
	}
	var d Config
	d.ApplyDefaults()
	return fieldByPath(reflect.ValueOf(&d).Elem(), path).Interface()
}
