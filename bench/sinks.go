package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sinkGoal is the records/s issue 24 asks of each database sink, batched.
const sinkGoal = 20000

// sinkBenchmarks are the record sinks' own benchmarks (recordtest.Bench: Sets
// of 10 records, a Flush every 256 Sets), run by `go test` in the source
// tree; keep=2 keeps two earlier versions of each Set.
var sinkBenchmarks = []struct{ name, pkg string }{
	{"SQLite", "./record/sqlitesink/"},
	{"Postgres", "./record/pgsink/"},
	{"CSV", "./record/csvsink/"},
	{"Parquet", "./record/parquetsink/"},
}

// benchLine is one result line of `go test -bench`, with recordtest's
// records/s metric.
var benchLine = regexp.MustCompile(`(?m)^Benchmark(Sink\w+/keep=\d+)(?:-\d+)?\s+\d+\s+\d+(?:\.\d+)? ns/op.*?\s(\d+(?:\.\d+)?(?:e\+\d+)?) records/s`)

// sinkFigures runs the SQLite, PostgreSQL, CSV and Parquet sinks' benchmarks o.rounds
// times each, alternating, and prints records/s; PostgreSQL is started by the benchmark
// itself (internal/testkit/pgtest, fsync on).
func sinkFigures(ctx context.Context, w io.Writer, o options) ([]goal, error) {
	src, err := filepath.Abs(o.src)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(src, "record", "recordtest")); err != nil {
		return nil, fmt.Errorf("-src %s: not the distscrape source tree (%w)", o.src, err)
	}
	type fig struct {
		name  string
		rates []float64
	}
	var figs []*fig
	// One go test per round: BenchmarkSinkPostgres names its databases by
	// b.N, so -count > 1 on one server collides with the earlier run's.
	for r := range o.rounds {
		for _, b := range sinkBenchmarks {
			args := []string{"test", "-count", "1", "-run", "^$", "-bench", "^BenchmarkSink" + b.name + "$", "-benchtime", o.sinkTime, b.pkg}
			cmd := exec.CommandContext(ctx, "go", args...)
			cmd.Dir = src
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			err := cmd.Run()
			if err == nil && strings.Contains(out.String(), "--- FAIL") {
				err = errors.New("a benchmark failed")
			}
			if err != nil {
				return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, tail(out.String(), 20))
			}
			fmt.Fprintf(os.Stderr, "# record sink round %d: %s: %s\n", r+1, b.name, time.Since(start).Round(time.Second))
			for _, m := range benchLine.FindAllStringSubmatch(out.String(), -1) {
				v, err := strconv.ParseFloat(m[2], 64)
				if err != nil {
					return nil, fmt.Errorf("record sink benchmark: %q: %w", m[0], err)
				}
				i := slices.IndexFunc(figs, func(f *fig) bool { return f.name == m[1] })
				if i < 0 {
					figs, i = append(figs, &fig{name: m[1]}), len(figs)
				}
				figs[i].rates = append(figs[i].rates, v)
			}
		}
	}
	fmt.Fprintf(w, "\n### Record sinks: records/s, Sets of 10 records, a Flush every 256 Sets (`go test -bench BenchmarkSink… -benchtime %s`, %d runs each)\n\n", o.sinkTime, o.rounds)
	fmt.Fprintln(w, "| sink | records/s (median) | min–max |\n|---|---:|---:|")
	var goals []goal
	for _, want := range []string{"SinkSQLite/keep=0", "SinkSQLite/keep=2", "SinkPostgres/keep=0", "SinkPostgres/keep=2",
		"SinkCSV/keep=0", "SinkCSV/keep=2", "SinkParquet/keep=0", "SinkParquet/keep=2"} {
		i := slices.IndexFunc(figs, func(f *fig) bool { return f.name == want })
		if i < 0 {
			fmt.Fprintf(w, "| %s | not measured (the benchmark was skipped) | |\n", want)
			continue
		}
		r := slices.Sorted(slices.Values(figs[i].rates))
		med := r[len(r)/2]
		if len(r)%2 == 0 {
			med = (r[len(r)/2-1] + r[len(r)/2]) / 2
		}
		fmt.Fprintf(w, "| %s | %s | %s–%s |\n", want, num(med), num(r[0]), num(r[len(r)-1]))
		if want == "SinkSQLite/keep=0" || want == "SinkPostgres/keep=0" {
			goals = append(goals, goal{what: fmt.Sprintf("records into %s ≥ %s/s, batched", want[4:len(want)-7], num(sinkGoal)),
				got: med, want: sinkGoal, unit: "/s"})
		}
	}
	return goals, nil
}
