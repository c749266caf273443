// Package newdriver_test proves that a driver the config has never heard
// of gets every service of the config from its registration alone: its
// keys decoded with lines, types and ${VAR}, DISTSCRAPE_* overrides,
// defaults, zeros refused, its problems at its keys, other kinds' keys
// refused, did-you-mean, Marshal and Redacted. It is a package of its own
// so that its drivers change no other test's kind lists.
package newdriver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/driver"
	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/record"
	"github.com/distscrape/distscrape/saver"
	_ "github.com/distscrape/distscrape/saver/filesaver"
	_ "github.com/distscrape/distscrape/tracker/memtracker"
)

// memSection is the keys of a saver kind "mem".
type memSection struct {
	URL     string        `yaml:"url" redact:"url"`
	MaxSize driver.Size   `yaml:"max_size" default:"2MiB"`
	Every   time.Duration `yaml:"every" default:"5s"`
	Workers int           `yaml:"workers" default:"4"`
	Name    string        `yaml:"name"`
}

func (s *memSection) Validate(p *driver.Problems, env saver.Env) {
	if s.Name == "bad" {
		p.Add("name", "bad is not a name (crawl %s)", env.Crawl)
	}
	p.IntRange("workers", s.Workers, 1, 64)
}

func (s *memSection) Open(context.Context, saver.Env) (saver.Saver, error) { return saver.None(), nil }

func (s *memSection) Location(saver.Env) string { return "memory" }

// rowsSection is the keys of a record sink kind "rows", with tables.
type rowsSection struct {
	Table string `yaml:"table" default:"rows"`
}

func (s *rowsSection) Validate(*driver.Problems) {}
func (s *rowsSection) Open(context.Context, record.Options) (record.Sink, error) {
	return nil, nil
}
func (s *rowsSection) Reader(context.Context, string) (record.Reader, error) { return nil, nil }
func (s *rowsSection) Location(func(string) string) string                   { return "rows" }

func init() {
	saver.Register(saver.Driver{Kind: "mem", New: func() saver.Section { return &memSection{} }})
	record.Register(record.Driver{Kind: "rows", New: func() record.Section { return &rowsSection{} }, Tables: true})
}

const head = "crawl: c\nscraper: {seeds: ['https://a.org/']}\n"

func parse(t *testing.T, src string, env map[string]string) (*config.Config, error) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	return config.Parse([]byte(head+src), "n.yaml")
}

func TestNewDriverKeys(t *testing.T) {
	t.Setenv("PW", "hunter2")
	c, err := parse(t, "saver:\n  name: ok\n  url: https://u:${PW}@store.example/x\n  every: 1m\n  kind: mem\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := c.Saver.Driver.(*memSection)
	if !ok {
		t.Fatalf("saver section %T, want *memSection", c.Saver.Driver)
	}
	want := memSection{URL: "https://u:hunter2@store.example/x", MaxSize: 2 * driver.MiB, Every: time.Minute, Workers: 4, Name: "ok"}
	if *s != want {
		t.Errorf("section %+v, want %+v (the file's keys, the kind after them, and the default tags)", *s, want)
	}
	if c.Saver.KeepVersions != config.DefaultKeepVersions {
		t.Errorf("keep_versions %d: a driver without Keeps takes the default", c.Saver.KeepVersions)
	}
	out, err := config.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := config.Parse(out, "back.yaml")
	if err != nil {
		t.Fatalf("Marshal's output does not parse: %v\n%s", err, out)
	}
	if got := *back.Saver.Driver.(*memSection); got != want {
		t.Errorf("round trip: %+v, want %+v\n%s", got, want, out)
	}
	red, err := config.Marshal(c.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(red), "hunter2") || !strings.Contains(string(red), "https://xxxxx@store.example/x") {
		t.Errorf("redacted url (redact:\"url\"):\n%s", red)
	}
	if s.URL != want.URL {
		t.Error("Redacted changed the original section")
	}
}

func TestNewDriverEnv(t *testing.T) {
	c, err := parse(t, "", map[string]string{"DISTSCRAPE_SAVER_KIND": "mem", "DISTSCRAPE_SAVER_WORKERS": "8",
		"DISTSCRAPE_SAVER_MAX_SIZE": "1GiB"})
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Saver.Driver.(*memSection); s.Workers != 8 || s.MaxSize != driver.GiB {
		t.Errorf("overrides not applied: %+v", s)
	}
	found := false
	for _, kv := range config.EnvVars() {
		found = found || kv == [2]string{"DISTSCRAPE_SAVER_WORKERS", "saver.workers"}
	}
	if !found {
		t.Error("EnvVars does not list DISTSCRAPE_SAVER_WORKERS")
	}
	if u := config.UnknownEnv([]string{"DISTSCRAPE_SAVER_WORKERS=1", "DISTSCRAPE_RECORDS_TABLE=t"}); len(u) != 0 {
		t.Errorf("UnknownEnv flags a driver's variables: %v", u)
	}
}

// TestNewDriverProblems: each class of bad input to a driver's section,
// through the file and the environment.
func TestNewDriverProblems(t *testing.T) {
	tests := []struct {
		name, src string
		env       map[string]string
		want      []string
	}{
		{"section's own problem", "saver: {kind: mem, name: bad}\n", nil, []string{"saver.name: bad is not a name (crawl c) (n.yaml:3)"}},
		{"range", "saver: {kind: mem, workers: 99}\n", nil, []string{"saver.workers: 99 is out of range (1 to 64) (n.yaml:3)"}},
		{"zero written", "saver: {kind: mem, workers: 0}\n", nil, []string{"saver.workers: 0 is not a valid setting; omit the key for the default (4)"}},
		{"zero size written", "saver: {kind: mem, max_size: 0}\n", nil, []string{"saver.max_size: 0 is not a valid setting; omit the key for the default (2MiB)"}},
		{"zero from env", "saver: {kind: mem}\n", map[string]string{"DISTSCRAPE_SAVER_WORKERS": "0"}, []string{"saver.workers: 0 is not a valid setting"}},
		{"type", "saver: {kind: mem, every: soon}\n", nil, []string{"saver.every: ", "(n.yaml:3)"}},
		{"type from env", "saver: {kind: mem}\n", map[string]string{"DISTSCRAPE_SAVER_WORKERS": "many"}, []string{"saver.workers: from DISTSCRAPE_SAVER_WORKERS: "}},
		{"list for a scalar", "saver: {kind: mem, name: [a]}\n", nil, []string{"saver.name: expected a string, got a list"}},
		{"typo", "saver: {kind: mem, wokers: 2}\n", nil, []string{"saver.wokers: unknown key (did you mean workers?) (n.yaml:3)"}},
		{"duplicate", "saver:\n  kind: mem\n  name: a\n  name: b\n", nil, []string{"saver.name: duplicate key (n.yaml:6)"}},
		{"another kind's key", "saver: {kind: file, workers: 2}\n", nil, []string{"saver.workers: applies to saver.kind mem only, and saver.kind is file"}},
		{"this kind's key on another", "saver: {kind: mem, layout: flat}\n", nil, []string{"saver.layout: applies to saver.kind file only, and saver.kind is mem"}},
		{"another kind's key from env", "", map[string]string{"DISTSCRAPE_SAVER_WORKERS": "2"}, []string{"saver.workers: applies to saver.kind mem only, and saver.kind is file"}},
		{"unknown kind lists the new one", "saver: {kind: mom}\n", nil, []string{`saver.kind: unknown value "mom" (want file, mem or none)`}},
		{"table_prefix with tables", "extract: [{name: p, match: ., fields: {t: {css: title}}}]\nrecords: {kind: rows, table_prefix: BAD}\n", nil,
			[]string{"records.table_prefix: \"BAD\": use lower-case"}},
		{"records key without rules", "records: {table: t}\n", nil, []string{"records.table: no records are written: the config has no extract rules"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(t, tt.src, tt.env)
			if err == nil {
				t.Fatalf("accepted; want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("want %q in:\n%v", w, err)
				}
			}
		})
	}
}
