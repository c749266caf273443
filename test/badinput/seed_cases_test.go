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

// stdin feeds lines to `seed --file -`.
func stdin(lines ...string) func(*bench) []string {
	return func(b *bench) []string {
		b.cmd.Stdin = strings.Join(lines, "\n")
		return []string{"--file", "-"}
	}
}

const bom = "\ufeff"

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
		// A byte-order mark is not part of an item, wherever a file's start
		// lands: the first line, files joined with cat, a comment line,
		// stdin, $(cat file) as arguments. The second spelling of 101
		// must add nothing.
		seedCase("BOM first line", true, seedFile("ids.txt", bom+"101", "101", "102"),
			0, []string{"added 2 new items of 3"}, 2),
		seedCase("BOM of a joined file", true, seedFile("ids.txt", "101", bom+"101", "102"),
			0, []string{"added 2 new items of 3"}, 2),
		seedCase("BOM before a comment", true, seedFile("ids.txt", bom+"# ids", "101"),
			0, []string{"added 1 new items of 1"}, 1),
		seedCase("BOM alone", true, seedFile("ids.txt", bom, "101"),
			0, []string{"added 1 new items of 1"}, 1),
		seedCase("BOM on stdin", true, stdin(bom+"101", "101"),
			0, []string{"added 1 new items of 2"}, 1),
		seedCase("BOM in an argument", true, args(bom+"101", "101"),
			0, []string{"added 1 new items of 2"}, 1),
		seedCase("BOM before a URL", false, seedFile("seeds.txt", bom+u(1), u(1)),
			0, []string{"added 1 new items of 2"}, 1),
		seedCase("BOM inside a line", true, seedFile("ids.txt", "101", "10"+bom+"2"),
			2, []string{"line 2", "byte-order mark"}, 1),
		seedCase("UTF-16 file", true, func(b *bench) []string {
			return []string{"--file", b.file("ids.txt", []byte("\xff\xfe1\x000\x001\x00\n\x00"))}
		}, 2, []string{"line 1", "UTF-16"}, 0),
		// The characters the tracker refuses are refused here first, with
		// the line, for IDs and URLs alike (a URL's space is not escaped
		// into another page).
		seedCase("control character in an ID", true, seedFile("ids.txt", "1", "2\a"),
			2, []string{"line 2", "control character U+0007"}, 1),
		seedCase("C1 control in an ID", true, seedFile("ids.txt", "1", "2\u00853"),
			2, []string{"line 2", "control character U+0085"}, 1),
		seedCase("zero-width space in an ID", true, stdin("1", "2\u200b"),
			2, []string{"line 2", "U+200B"}, 1),
		seedCase("control character in an argument", true, args("1", "2\x1b[31m"),
			2, []string{"argument 2", "control character U+001B"}, 0),
		seedCase("space in a URL", false, seedFile("seeds.txt", u(1), "http://127.0.0.1:1/a b"),
			2, []string{"line 2", "whitespace U+0020"}, 1),
		seedCase("bidi override in a URL", false, args("http://127.0.0.1:1/\u202etxt.exe"),
			2, []string{"argument 1", "U+202E"}, 0),
		seedCase("range reversed", true, args("--range", "10-1"), 2, []string{"--range", "greater than"}, 0),
		seedCase("range overflow", true, args("--range", "1-99999999999999999999999"), 2, []string{"--range", "larger than"}, 0),
		seedCase("range every uint64", true, args("--range", "0-18446744073709551615"), 2, []string{"--range", "overflows"}, 0),
		seedCase("range longer than the trackers take", true, args("--range", "0-1152921504606846976"),
			2, []string{"--range", "more than 2^60 IDs"}, 0),
		seedCase("range of huge IDs longer than the trackers take", true, args("--range", "4611686018427387904-5764607523034234880"),
			2, []string{"--range", "more than 2^60 IDs"}, 0),
		seedCase("range not numbers", true, args("--range", "a-b"), 2, []string{"--range", "not a non-negative integer"}, 0),
		seedCase("range on a link crawl", false, args("--range", "1-10"), 2, []string{"--range", "kind: id"}, 0),
		// A label goes into headers and command lines as it is: one class of
		// refusals, each naming --label and the label, before anything is added.
		seedCase("label empty", true, args("--label", "", "1"), 2, []string{"--label", "empty label"}, 0),
		seedCase("label with a space", true, args("--label", "a b", "1"), 2, []string{`--label "a b"`, `" " at byte 1`}, 0),
		seedCase("label with a comma", true, args("--label", "a,b", "1"), 0, []string{"added 1 new items of 1"}, 1), // two labels, a and b
		seedCase("label with a comma and a bad one", true, args("--label", "a,b c", "1"), 2, []string{`--label "b c"`}, 0),
		seedCase("label with a newline", true, args("--label", "a\nb", "1"), 2, []string{"--label", `"\n" at byte 1`}, 0),
		seedCase("label with a control character", true, args("--label", "a\x1b[31m", "1"), 2, []string{"--label", `"\x1b"`}, 0),
		seedCase("label non-ASCII", true, args("--label", "café", "1"), 2, []string{"--label", `"\xc3" at byte 3`}, 0),
		seedCase("label starting with a dash", true, args("--label=-x", "1"), 2, []string{"--label", "starts with"}, 0),
		seedCase("label too long", true, args("--label", strings.Repeat("l", 65), "1"), 2, []string{"--label", "longer than the limit of 64"}, 0),
		seedCase("label twice", true, args("--label", "a", "--label", "a", "1"), 2, []string{"--label", "given twice"}, 0),
		seedCase("labels too many", true, func(*bench) []string {
			var a []string
			for i := range 17 {
				a = append(a, "--label", fmt.Sprintf("l%d", i))
			}
			return append(a, "1")
		}, 2, []string{"--label", "17 labels"}, 0),
		seedCase("label on a range", true, args("--label", "a", "--range", "1-10"), 2, []string{"--label", "carry no labels"}, 0),
		seedCase("labels", true, args("--label", "a", "--label", "b.c_d-9", "1", "2"), 0, []string{"added 2 new items of 2"}, 2),
	}
}
