package fixturesite

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Pages that need a browser (issue 25), under JSPrefix. No page of the link
// site links to them. A plain fetch of them gets a shell without their
// content; a browser gets it.
//
//   - JSLatePath: a script writes <p id="late">JSLateText</p> 300 ms after
//     the load event.
//   - JSScrollPath: an infinite list: JSScrollItems <li class="entry">,
//     JSScrollBatch at a time, fetched (/js/scroll/items?batch=N, JSON)
//     when the end of the list is scrolled into view; none in the HTML.
//   - JSHostilePath?to=URL[&to=URL...]: a script fetch()es, XHRs,
//     beacons, and opens as an image, an iframe and a WebSocket each URL:
//     a renderer must let none of them reach anything it refuses.
//   - JSManyPath?n=N: a page with N images (JSImagePrefix{i}.png, each a
//     small PNG), for per-host concurrency.
//   - JSHangPath: a page whose script /js/stall never answers: it never
//     finishes loading.
const (
	JSPrefix      = "/js/"
	JSLatePath    = "/js/late"
	JSLateText    = "Written by a script after 300 ms"
	JSScrollPath  = "/js/scroll"
	JSScrollItems = 60
	JSScrollBatch = 10
	JSHostilePath = "/js/hostile"
	JSManyPath    = "/js/many"
	JSImagePrefix = "/js/img/"
	JSHangPath    = "/js/hang"
	jsStallPath   = "/js/stall"
	jsItemsPath   = "/js/scroll/items"
)

// jsPaths reports whether p is one of the browser pages (for Unexpected).
func jsPaths(p string) bool { return strings.HasPrefix(p, JSPrefix) }

const lateHTML = `<!DOCTYPE html>
<html><head><title>Late</title></head><body><h1>Late</h1><div id="box"></div>
<script>
window.addEventListener("load", () => setTimeout(() => {
  const p = document.createElement("p"); p.id = "late"; p.textContent = %s;
  document.getElementById("box").appendChild(p);
}, 300));
</script></body></html>
`

const scrollHTML = `<!DOCTYPE html>
<html><head><title>Scroll</title><style>li.entry{height:120px}</style></head><body>
<h1>Entries</h1><ul id="list"></ul><div id="end">loading</div>
<script>
let next = 0, busy = false, done = false;
async function more() {
  if (busy || done) return;
  busy = true;
  const r = await fetch("/js/scroll/items?batch=" + next);
  const items = await r.json();
  for (const it of items) {
    const li = document.createElement("li"); li.className = "entry"; li.dataset.n = it; li.textContent = "entry " + it;
    document.getElementById("list").appendChild(li);
  }
  next++; busy = false;
  if (items.length === 0) { done = true; document.getElementById("end").textContent = "the end"; }
}
new IntersectionObserver(es => { if (es.some(e => e.isIntersecting)) more(); }).observe(document.getElementById("end"));
</script></body></html>
`

const hostileHTML = `<!DOCTYPE html>
<html><head><title>Hostile</title></head><body><h1>Hostile</h1>
<script>
for (const u of %s) {
  fetch(u).catch(() => {});
  fetch(u, {method: "POST", body: "x", mode: "no-cors"}).catch(() => {});
  try { const x = new XMLHttpRequest(); x.open("GET", u); x.send(); } catch (e) {}
  try { navigator.sendBeacon(u, "beacon"); } catch (e) {}
  const i = document.createElement("img"); i.src = u; document.body.appendChild(i);
  const f = document.createElement("iframe"); f.src = u; document.body.appendChild(f);
  try { new WebSocket(u.replace(/^http/, "ws")); } catch (e) {}
  try { new EventSource(u); } catch (e) {}
  try { new Worker(URL.createObjectURL(new Blob(["fetch(" + JSON.stringify(u) + ")"]))); } catch (e) {}
}
document.body.dataset.ran = "yes";
</script></body></html>
`

// tinyPNG is a 1×1 PNG.
var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// serveJS serves the browser pages; false when p is none of them.
func (s *Site) serveJS(w http.ResponseWriter, r *http.Request) bool {
	p := r.URL.Path
	h := w.Header()
	switch {
	case p == JSLatePath:
		text, _ := json.Marshal(JSLateText)
		h["Content-Type"] = htmlType
		fmt.Fprintf(w, lateHTML, text)
	case p == JSScrollPath:
		h["Content-Type"] = htmlType
		_, _ = w.Write([]byte(scrollHTML))
	case p == jsItemsPath:
		batch, _ := strconv.Atoi(r.URL.Query().Get("batch"))
		items := []int{}
		for i := batch * JSScrollBatch; i < min((batch+1)*JSScrollBatch, JSScrollItems) && batch >= 0; i++ {
			items = append(items, i)
		}
		h.Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(items)
	case p == JSHostilePath:
		to, _ := json.Marshal(r.URL.Query()["to"])
		h["Content-Type"] = htmlType
		fmt.Fprintf(w, hostileHTML, to)
	case p == JSManyPath:
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		h["Content-Type"] = htmlType
		var b strings.Builder
		b.WriteString("<!DOCTYPE html>\n<html><head><title>Many</title></head><body><h1>Many</h1>\n")
		for i := range min(max(n, 0), 1000) {
			fmt.Fprintf(&b, "<img src=\"%s%d.png\" width=\"1\" height=\"1\">\n", JSImagePrefix, i)
		}
		b.WriteString("</body></html>\n")
		_, _ = w.Write([]byte(b.String()))
	case strings.HasPrefix(p, JSImagePrefix) && strings.HasSuffix(p, ".png"):
		h.Set("Content-Type", "image/png")
		_, _ = w.Write(tinyPNG)
	case p == JSHangPath:
		h["Content-Type"] = htmlType
		_, _ = w.Write([]byte("<!DOCTYPE html>\n<html><head><title>Hang</title></head><body><h1>Hang</h1><script src=\"" + jsStallPath + "\"></script></body></html>\n"))
	case s.serveGate(w, r), s.serveJSHostile(w, r):
	case p == jsStallPath:
		<-r.Context().Done() // until the client gives up
	default:
		return false
	}
	return true
}
