package chromium

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/fetch/render"
	"github.com/distscrape/distscrape/internal/testkit/recorder"
	"github.com/distscrape/distscrape/test/fixturesite"
)

// navPath is the fixture page leaving itself for to by how.
func navPath(how, to string, delay int) string {
	q := url.Values{"how": {how}, "to": {to}}
	if delay >= 0 {
		q.Set("delay", strconv.Itoa(delay))
	}
	return fixturesite.JSNavPath + "?" + q.Encode()
}

// notErrorPage fails t when body is Chromium's error page or lacks want.
func notErrorPage(t *testing.T, name string, body []byte, want string) {
	t.Helper()
	s := string(body)
	for _, bad := range []string{"ERR_BLOCKED_BY_CLIENT", "ERR_ABORTED", "chrome-error", "neterror", "This site can"} {
		if strings.Contains(s, bad) {
			t.Errorf("%s: saved Chromium's error page (%s):\n%.400s", name, bad, s)
			return
		}
	}
	if !strings.Contains(s, want) {
		t.Errorf("%s: body lacks %q:\n%.600s", name, want, s)
	}
}

// TestRenderTopFrameNavigation: a page that sends its top frame
// elsewhere, in every way a page does (location.replace, location= after
// a delay, a form POSTed, a link clicked, a meta refresh), is a redirect
// of the item: in scope, the target is the page returned, its URL the
// target's and the page a hop; out of scope, the navigation is refused
// and the page is kept as it stood. Never Chromium's error page, never a
// failure.
func TestRenderTopFrameNavigation(t *testing.T) {
	tb := setup(t, nil)
	offsite := recorder.Start(t, nil)
	for _, how := range fixturesite.JSNavHows {
		rules := map[string]render.Rule{
			"load":         {},
			"network idle": {WaitFor: render.NetworkIdle},
		}
		for rname, rule := range rules {
			delay := 100
			if how == "meta" {
				delay = 0
			}
			t.Run(how+"/in scope/"+rname, func(t *testing.T) {
				target := tb.site.URL() + fixturesite.JSNavTargetPath
				rule := rule
				if rname == "load" {
					// Taken at the load event: the target's own element
					// is what to wait for, whenever the page leaves.
					rule = render.Rule{WaitFor: "#target"}
				}
				p, err := tb.render(t, navPath(how, target, delay), rule)
				if err != nil {
					t.Fatalf("%v", err)
				}
				notErrorPage(t, how, p.Response.Body, fixturesite.JSNavTargetText)
				r := p.Response
				if r.URL.Path != fixturesite.JSNavTargetPath || r.Status != 200 {
					t.Errorf("response URL %v status %d, want the target's", r.URL, r.Status)
				}
				if len(r.Hops) == 0 || r.Hops[len(r.Hops)-1].URL.Path != fixturesite.JSNavPath {
					t.Errorf("hops %v: want the page that navigated as the last hop", hopURLs(r.Hops))
				}
			})
			t.Run(how+"/out of scope/"+rname, func(t *testing.T) {
				p, err := tb.render(t, navPath(how, offsite.URL+"/away", delay), rule)
				if err != nil {
					t.Fatalf("%v", err)
				}
				notErrorPage(t, how, p.Response.Body, fixturesite.JSNavOriginText)
				if r := p.Response; r.URL.Path != fixturesite.JSNavPath || len(r.Hops) != 0 {
					t.Errorf("response URL %v hops %v, want the page itself", r.URL, hopURLs(r.Hops))
				}
			})
		}
	}
	for _, s := range offsite.Seen() {
		t.Errorf("the out-of-scope host got %s", s)
	}
}

// TestRenderDelayedNavigation: a location= that comes after the page
// was taken, or while it is being waited for, ends the item as a page,
// never as a retry: each delay around the idle window.
func TestRenderDelayedNavigation(t *testing.T) {
	tb := setup(t, nil)
	target := tb.site.URL() + fixturesite.JSNavTargetPath
	for _, delay := range []int{0, 50, 250, 300, 350, 600, 1500} {
		for _, rule := range []render.Rule{{}, {WaitFor: render.NetworkIdle}, {WaitFor: "#origin"}, {WaitFor: render.NetworkIdle, Scroll: 2}} {
			p, err := tb.render(t, navPath("assign", target, delay), rule)
			if err != nil {
				t.Errorf("delay %dms rule %+v: %v", delay, rule, err)
				continue
			}
			want := fixturesite.JSNavOriginText
			if p.Response.URL.Path == fixturesite.JSNavTargetPath {
				want = fixturesite.JSNavTargetText
			}
			notErrorPage(t, "delay "+strconv.Itoa(delay), p.Response.Body, want)
		}
	}
}

// TestRenderNavigationLoop: a page that navigates to itself forever ends
// as a page (the last one let in) within the navigation bound, not a
// timeout.
func TestRenderNavigationLoop(t *testing.T) {
	tb := setup(t, nil)
	p, err := tb.render(t, fixturesite.JSNavLoopPath+"?n=0", render.Rule{WaitFor: render.NetworkIdle})
	if err != nil {
		t.Fatal(err)
	}
	notErrorPage(t, "loop", p.Response.Body, `id="loop"`)
	if n := tb.site.Requests(fixturesite.JSNavLoopPath); n > 8+2 {
		t.Errorf("%d requests of the loop, bound %d", n, 8)
	}
}

func hopURLs(hs []*fetch.Response) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.URL.String())
	}
	return out
}

// TestRenderDialogs: a page that opens an alert, a confirm or a prompt
// before writing its content renders at once with that content (the
// dialog dismissed: confirm false, prompt null), not at its timeout.
func TestRenderDialogs(t *testing.T) {
	tb := setup(t, func(_ *fetch.Config, c *Config) { c.Timeout = 10 * time.Second })
	for kind, answer := range map[string]string{"alert": "undefined", "confirm": "false", "prompt": "null"} {
		for _, rule := range []render.Rule{{}, {WaitFor: "#after"}, {WaitFor: render.NetworkIdle}} {
			p, err := tb.render(t, fixturesite.JSDialogPath+"?kind="+kind, rule)
			if err != nil {
				t.Errorf("%s %+v: %v", kind, rule, err)
				continue
			}
			if want := fixturesite.JSDialogText + " " + answer; !strings.Contains(string(p.Response.Body), want) {
				t.Errorf("%s %+v: body lacks %q:\n%.400s", kind, rule, want, p.Response.Body)
			}
		}
	}
}
