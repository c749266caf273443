package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// result is one run of one contender.
type result struct {
	elapsed  time.Duration
	units    int64 // pages saved, requests served, or items through the lifecycle
	requests int64 // requests the site served (crawls)
	dups     int64 // fetches of a page already fetched (crawls)
	// cpu is the CPU time (user + system) the contender's processes used,
	// Redis included: unlike the rates, it hardly depends on what else
	// the machine runs at the time.
	cpu time.Duration
}

func (r result) rate() float64 { return float64(r.units) / r.elapsed.Seconds() }

// figure is a contender's runs; its figure is the median rate.
type figure struct {
	name string
	runs []result
}

func (f *figure) median() float64 {
	if len(f.runs) == 0 {
		return 0
	}
	r := make([]float64, len(f.runs))
	for i, x := range f.runs {
		r[i] = x.rate()
	}
	slices.Sort(r)
	if n := len(r); n%2 == 0 {
		return (r[n/2-1] + r[n/2]) / 2
	}
	return r[len(r)/2]
}

// cpuPer is the median CPU time per unit, in µs.
func (f *figure) cpuPer() float64 {
	r := make([]float64, len(f.runs))
	for i, x := range f.runs {
		r[i] = float64(x.cpu.Microseconds()) / float64(max(x.units, 1))
	}
	slices.Sort(r)
	if n := len(r); n%2 == 0 {
		return (r[n/2-1] + r[n/2]) / 2
	}
	return r[len(r)/2]
}

func (f *figure) spread() string {
	lo, hi := f.runs[0].rate(), f.runs[0].rate()
	for _, x := range f.runs[1:] {
		lo, hi = min(lo, x.rate()), max(hi, x.rate())
	}
	return num(lo) + "–" + num(hi)
}

// alternate returns the order of round r: forwards on even rounds,
// backwards on odd ones, so no contender always runs first (cold caches)
// or last (a warm page cache, a fragmented heap).
func alternate[T any](xs []T, r int) []T {
	out := slices.Clone(xs)
	if r%2 == 1 {
		slices.Reverse(out)
	}
	return out
}

// num formats a rate with thousands separators and no decimals.
func num(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func pct(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*a/b)
}

// crawlTable prints one crawl scenario: figs[0] is the ceiling, figs[1] Colly.
// bound, when positive, is concurrency ÷ latency in pages/s.
func crawlTable(w io.Writer, title string, figs []*figure, bound float64) {
	fmt.Fprintf(w, "\n### %s\n\n", title)
	head := "| | pages/s (median) | min–max | × Colly | % of ceiling |"
	sep := "|---|---:|---:|---:|---:|"
	if bound > 0 {
		head += fmt.Sprintf(" %% of concurrency÷latency (%s/s) |", num(bound))
		sep += "---:|"
	}
	fmt.Fprintln(w, head+" CPU µs/page | requests | duplicate fetches |")
	fmt.Fprintln(w, sep+"---:|---:|---:|")
	ceil, colly := figs[0].median(), figs[1].median()
	for i, f := range figs {
		m := f.median()
		rate := num(m)
		if i == 0 {
			rate += " req/s"
		}
		row := fmt.Sprintf("| %s | %s | %s | %s | %s |", f.name, rate, f.spread(), ratio(m, colly), pct(m, ceil))
		if bound > 0 {
			row += " " + pct(m, bound) + " |"
		}
		last := f.runs[len(f.runs)-1]
		fmt.Fprintf(w, "%s %.0f | %d | %d |\n", row, f.cpuPer(), last.requests, last.dups)
	}
}

// extractTable prints the extraction scenario: figs[0] is distscrape without
// extraction, figs[1] with fields and main text, figs[2] with fields only,
// figs[4] Colly with the five fields, figs[5] with main text too; then the
// ratios of each round, whose contenders ran back to back.
func extractTable(w io.Writer, title string, figs []*figure) {
	fmt.Fprintf(w, "\n### %s\n\n", title)
	fmt.Fprintln(w, "| | pages/s (median) | min–max | % of distscrape without extraction | × Colly + 5 fields | CPU µs/page | requests | duplicate fetches |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	plain, colly := figs[0].median(), figs[4].median()
	for _, f := range figs {
		m := f.median()
		last := f.runs[len(f.runs)-1]
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %.0f | %d | %d |\n", f.name, num(m), f.spread(), pct(m, plain), ratio(m, colly), f.cpuPer(), last.requests, last.dups)
	}
	fmt.Fprint(w, "\nPer round (contenders back to back):\n")
	for r := range figs[0].runs {
		rate := func(i int) float64 { return figs[i].runs[r].rate() }
		fmt.Fprintf(w, "\n- round %d: fields + main ÷ no extraction %s, fields only ÷ no extraction %s; "+
			"fields + main ÷ Colly + 5 fields %s, ÷ Colly + 5 fields + main text %s; fields only ÷ Colly + 5 fields %s",
			r+1, pct(rate(1), rate(0)), pct(rate(2), rate(0)), ratio(rate(1), rate(4)), ratio(rate(1), rate(5)), ratio(rate(2), rate(4)))
	}
	fmt.Fprintln(w)
}

// lifeTable prints the lifecycle figures: figs[0] distscrape, [1] asynq, [2] ceiling.
func lifeTable(w io.Writer, title string, figs []*figure) {
	fmt.Fprintf(w, "\n### %s\n\n", title)
	fmt.Fprintln(w, "| | items/s (median) | min–max | × asynq | % of go-redis ceiling | CPU µs/item |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	asq, ceil := figs[1].median(), figs[2].median()
	for _, f := range figs {
		m := f.median()
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %.1f |\n", f.name, num(m), f.spread(), ratio(m, asq), pct(m, ceil), f.cpuPer())
	}
}

// goal is one target of the issue, checked against the figures.
type goal struct {
	what      string
	got, want float64
	unit      string // "×", "%" or "/s" (a rate, got and want in units/s)
}

func goalsTable(w io.Writer, goals []goal) {
	fmt.Fprintln(w, "\n### Goals\n\n| goal | measured | met |\n|---|---:|:---:|")
	for _, g := range goals {
		got := fmt.Sprintf("%.2f×", g.got)
		switch g.unit {
		case "%":
			got = fmt.Sprintf("%.0f%%", 100*g.got)
		case "/s":
			got = num(g.got) + "/s"
		}
		met := "yes"
		if g.got < g.want {
			met = fmt.Sprintf("no (%.0f%% short)", 100*(1-g.got/g.want))
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", g.what, got, met)
	}
}

// machine describes where the figures were measured.
func machine(redisVersion string) string {
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	kernel := "unknown"
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("%d CPUs (nproc), %s, Linux %s, %s, redis-server %s",
		runtime.NumCPU(), cpu, kernel, runtime.Version(), redisVersion)
}

// loadavg is the 1, 5 and 15 minute load averages: a busy machine (other
// jobs on these cores) makes every figure lower and noisier.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
