package fetch

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"
	"sync/atomic"
)

// UserAgentMode says how a client picks among Config.UserAgents.
type UserAgentMode string

// The modes of Config.UserAgentMode.
const (
	// Rotate takes the next user agent for every request, round robin.
	Rotate UserAgentMode = "rotate"
	// Sticky gives each host one user agent (by a hash of the host), so a
	// site sees one browser across the crawl, and every worker of a fleet
	// picks the same for it.
	Sticky UserAgentMode = "sticky"
)

// identity picks the User-Agent of a request and keeps the cookie jar.
type identity struct {
	agents []string
	mode   UserAgentMode
	next   atomic.Uint64
	jar    http.CookieJar
}

func newIdentity(cfg Config) (*identity, error) {
	id := &identity{agents: cfg.UserAgents, mode: cfg.UserAgentMode, jar: cfg.Jar}
	switch id.mode {
	case "":
		id.mode = Rotate
	case Rotate, Sticky:
	default:
		return nil, fmt.Errorf("fetch.user_agent_mode: %q: want rotate or sticky", string(cfg.UserAgentMode))
	}
	for i, a := range id.agents {
		if strings.TrimSpace(a) == "" || strings.ContainsAny(a, "\r\n\x00") {
			return nil, fmt.Errorf("fetch.user_agents[%d]: empty or holds a line break", i)
		}
	}
	return id, nil
}

// userAgent is the User-Agent for a request to host: fallback (UserAgent)
// when no list is configured.
func (id *identity) userAgent(host, fallback string) string {
	if len(id.agents) == 0 {
		return fallback
	}
	if id.mode == Sticky {
		h := fnv.New32a()
		h.Write([]byte(strings.ToLower(host)))
		return id.agents[h.Sum32()%uint32(len(id.agents))]
	}
	return id.agents[(id.next.Add(1)-1)%uint64(len(id.agents))]
}

// withCookies returns req as sent: the jar's cookies for its URL added
// after any Cookie header of its own. req itself is not changed, so a
// redirect's next hop gets the jar's cookies for its own URL only.
func (id *identity) withCookies(req *http.Request) *http.Request {
	if id.jar == nil {
		return req
	}
	cs := id.jar.Cookies(req.URL)
	if len(cs) == 0 {
		return req
	}
	out := *req
	out.Header = req.Header.Clone()
	parts := make([]string, 0, len(cs)+1)
	if own := out.Header.Get("Cookie"); own != "" {
		parts = append(parts, own)
	}
	for _, c := range cs {
		parts = append(parts, c.Name+"="+c.Value)
	}
	out.Header.Set("Cookie", strings.Join(parts, "; "))
	return &out
}

// keepCookies stores the cookies an answer sets, whatever its status (a
// login answers 302 with its session cookie).
func (id *identity) keepCookies(req *http.Request, resp *http.Response) {
	if id.jar == nil {
		return
	}
	if cs := resp.Cookies(); len(cs) > 0 {
		id.jar.SetCookies(req.URL, cs)
	}
}

// Jar is the client's cookie jar (Config.Jar); nil when cookies are off.
func (c *Client) Jar() http.CookieJar { return c.id.jar }
