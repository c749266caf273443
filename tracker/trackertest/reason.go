package trackertest

import "github.com/distscrape/distscrape/tracker"

// testReasonOneLine: a failure's reason is stored as one line (OneLine),
// whatever it holds, so `distscrape failed` prints one line per item.
func testReasonOneLine(e *env) {
	reasons := []string{"HTTP 500\n<html>\r\n<h1>oops</h1>", "a\tb\x00c\x1b[31m", "line\u2028sep", "bad \xff utf-8"}
	keys := numbered("r", len(reasons))
	e.add(keys...)
	want := map[string]string{}
	for i, l := range e.checkout("w", len(keys)) {
		e.fail(l, reasons[i], true, 0)
		want[l.Key] = tracker.OneLine(reasons[i])
	}
	for _, f := range e.failed() {
		if f.Reason != want[f.Key] {
			e.t.Errorf("dead letter %s: reason %q, want %q", f.Key, f.Reason, want[f.Key])
		}
	}
}
