package badinput

import (
	"fmt"
	"strings"
	"time"

	"github.com/distscrape/distscrape/test/testbin"
)

// seedCase runs `seed` with args on a journaled memory tracker (a link
// crawl, or an ID crawl with ids) and then checks the items added.
func seedCase(name string, ids bool, setup func(b *bench) []string, code int, want []string, added int64) hostile {
	return hostile{
		name: "seed/" + name,
		run: func(b *bench) testbin.Result {
			scr := linkScraper("http://127.0.0.1:1/")
			if ids {
				scr = "scraper: {kind: id, seeds: ['1'], id_regex: '(\\d+)', download_url_fmt: 'http://127.0.0.1:1/item/{id}'}"
			}
			cfg := b.config("crawl: seeds", b.memoryTracker(""), scr, "saver: {kind: none}")
			return b.exec(time.Minute, append([]string{"seed", "-c", cfg}, setup(b)...)...)
		},
		code: code,
		want: want,
		check: func(b *bench, _ testbin.Result) {
			// Everything before a bad line is added, nothing after it.
			if st := b.status(b.dir + "/crawl.yaml"); st.Added != added || st.Pending != added {
				b.t.Errorf("tracker %+v after the seed, want exactly %d added and pending", st, added)
			}
		},
	}
}

func seedFile(name string, lines ...string) func(b *bench) []string {
	return func(b *bench) []string {
		return []string{"--file", b.file(name, []byte(strings.Join(lines, "\n")))}
	}
}

func args(a ...string) func(*bench) []string { return func(*bench) []string { return a } }

func seedCases() []hostile {
	u := func(i int) string { return fmt.Sprintf("http://127.0.0.1:1/p%d", i) }
	return []hostile{
		seedCase("blank lines and comments", false, seedFile("seeds.txt", "", u(1), "   ", "# comment", "\t"+u(2)+"\t", "", u(3), "", ""),
			0, []string{"added 3 new items of 3"}, 3),
		seedCase("NUL byte", false, seedFile("seeds.txt", u(1), u(2), "http://127.0.0.1:1/a\x00b", u(4)),
			2, []string{"line 3", "NUL", "added 2 new items of 2 read before the error"}, 2),
		seedCase("invalid UTF-8", false, seedFile("seeds.txt", u(1), "http://127.0.0.1:1/\xff\xfe", u(3)),
			2, []string{"line 2", "UTF-8"}, 1),
		seedCase("1 MiB line", false, seedFile("seeds.txt", u(1), u(2), "http://127.0.0.1:1/"+strings.Repeat("a", 1<<20), u(4)),
			2, []string{"line 3", "longer than"}, 2),
		seedCase("ID with whitespace", true, seedFile("ids.txt", "1", "2", "3 4"),
			2, []string{"line 3", "whitespace"}, 2),
		seedCase("range reversed", true, args("--range", "10-1"), 2, []string{"--range", "greater than"}, 0),
		seedCase("range overflow", true, args("--range", "1-99999999999999999999999"), 2, []string{"--range", "larger than"}, 0),
		seedCase("range every uint64", true, args("--range", "0-18446744073709551615"), 2, []string{"--range", "overflows"}, 0),
		seedCase("range not numbers", true, args("--range", "a-b"), 2, []string{"--range", "not a non-negative integer"}, 0),
		seedCase("range on a link crawl", false, args("--range", "1-10"), 2, []string{"--range", "kind: id"}, 0),
	}
}
