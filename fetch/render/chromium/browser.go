package chromium

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/distscrape/distscrape/fetch"
)

// Browser renders pages in one headless Chromium at a time, Concurrency
// tabs at once; it implements render.Renderer. A crashed browser, one
// that rendered RestartAfter pages or outgrew MaxRSS is replaced: the next
// page starts a new one, the old one is closed once its last tab is. Safe
// for concurrent use; one per worker.
type Browser struct {
	client *fetch.Client
	cfg    Config
	path   string
	tabs   chan struct{} // Concurrency slots

	mu     sync.Mutex
	cur    *instance
	closed bool
	wg     sync.WaitGroup // instances being closed
}

// instance is one browser process.
type instance struct {
	ctx     context.Context // the browser's chromedp context; done when it dies
	stop    func()          // kills it and removes its profile, waiting
	pid     int
	users   int  // tabs open; b.mu
	pages   int  // pages rendered; b.mu
	retired bool // takes no new tab; b.mu
}

// alive reports whether the process is still connected.
func (in *instance) alive() bool { return in.ctx.Err() == nil }

// New returns a Browser that fetches through client (the worker's: its
// robots.txt cache, per-host and fleet limits are shared with plain
// fetches) and starts the browser, so that a missing or broken Chromium is
// an error here (wrapping ErrNoBrowser or ErrStart), never a hang.
func New(client *fetch.Client, cfg Config) (*Browser, error) {
	if client == nil {
		return nil, fmt.Errorf("chromium: New needs the fetch client")
	}
	cfg = cfg.withDefaults()
	path, err := Find(cfg.ExecPath)
	if err != nil {
		return nil, err
	}
	b := &Browser{client: client, cfg: cfg, path: path, tabs: make(chan struct{}, cfg.Concurrency)}
	in, err := b.start()
	if err != nil {
		return nil, err
	}
	b.cur = in
	return b, nil
}

// Check reports the running browser's product and version ("Chrome/120.0...")
// for the `check` command, starting one if needed.
func (b *Browser) Check(ctx context.Context) (string, error) {
	in, err := b.acquire()
	if err != nil {
		return "", err
	}
	defer b.release(in)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(in.ctx, cancel)
	defer stop()
	v, err := cdpCallBrowser(ctx, in, browser.GetVersion)
	if err != nil {
		return "", fmt.Errorf("chromium: asking the browser its version: %w", err)
	}
	return v.Product, nil
}

// Close closes the browser; Render fails afterwards.
func (b *Browser) Close() error {
	b.mu.Lock()
	b.closed = true
	in := b.cur
	b.cur = nil
	if in != nil {
		in.retired = true
		if in.users == 0 {
			b.stopLocked(in)
		}
	}
	b.mu.Unlock()
	b.wg.Wait()
	return nil
}

// flags are the switches every browser starts with (see the package doc).
func (b *Browser) flags() []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(b.path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.WindowSize(b.cfg.Width, b.cfg.Height),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("safebrowsing-disable-auto-update", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,AutofillServerCommunication,CertificateTransparencyComponentUpdater"),
		// The second wall: nothing Go did not answer reaches a network.
		chromedp.Flag("proxy-server", "http://127.0.0.1:9"),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		chromedp.Flag("dns-prefetch-disable", true),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("webrtc-ip-handling-policy", "disable_non_proxied_udp"),
	}
}

// start launches a browser, with a fresh profile directory, within
// StartTimeout.
func (b *Browser) start() (*instance, error) {
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), b.flags()...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	stop := func() { cancelBrowser(); cancelAlloc() }
	errc := make(chan error, 1)
	go func() { errc <- chromedp.Do(bctx) }()
	t := time.NewTimer(b.cfg.StartTimeout)
	defer t.Stop()
	var err error
	select {
	case err = <-errc:
	case <-t.C:
		err = fmt.Errorf("no answer within %v", b.cfg.StartTimeout)
	}
	if err == nil {
		err = denyDownloads(bctx, b.cfg.StartTimeout)
	}
	if err != nil {
		stop()
		return nil, fmt.Errorf("%w: %s: %w", ErrStart, b.path, err)
	}
	in := &instance{ctx: bctx, stop: stop}
	if p := chromedp.FromContext(bctx).Browser.Process(); p != nil {
		in.pid = p.Pid
	}
	b.cfg.Logger.Debug("chromium started", "path", b.path, "pid", in.pid)
	return in, nil
}

// denyDownloads makes the browser refuse every download (an attachment,
// a link's download attribute, a blob:): no page writes a file anywhere.
// Tabs open in the default browser context, which this sets.
func denyDownloads(bctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(bctx, timeout)
	defer cancel()
	_, err := cdp.Call(ctx, chromedp.FromContext(bctx).Browser, browser.SetDownloadBehavior,
		browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorDeny})
	if err != nil {
		return fmt.Errorf("denying downloads: %w", err)
	}
	return nil
}

// acquire returns the browser to open a tab in, starting one when there is
// none, it died, or it is retired.
func (b *Browser) acquire() (*instance, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	if in := b.cur; in != nil && (!in.alive() || in.retired) {
		if !in.alive() {
			b.cfg.Logger.Warn("chromium died; starting a new one", "pid", in.pid)
		}
		in.retired = true
		if in.users == 0 {
			b.stopLocked(in)
		}
		b.cur = nil
	}
	if b.cur == nil {
		in, err := b.start()
		if err != nil {
			return nil, err
		}
		b.cur = in
	}
	b.cur.users++
	return b.cur, nil
}

// rssEvery is how many pages pass between two reads of the browser's
// memory (a walk of /proc).
const rssEvery = 8

// release returns a tab of in, retiring in when it rendered enough pages
// or grew too big, and closing it when retired and idle.
func (b *Browser) release(in *instance) {
	b.mu.Lock()
	defer b.mu.Unlock()
	in.users--
	in.pages++
	if !in.retired && b.cfg.RestartAfter > 0 && in.pages >= b.cfg.RestartAfter {
		b.cfg.Logger.Info("chromium replaced after its page budget", "pages", in.pages)
		in.retired = true
	}
	if !in.retired && b.cfg.MaxRSS > 0 && in.pages%rssEvery == 0 {
		if rss := treeRSS(in.pid); rss > b.cfg.MaxRSS {
			b.cfg.Logger.Info("chromium replaced: memory over bound", "rss", rss, "max", b.cfg.MaxRSS)
			in.retired = true
		}
	}
	if (in.retired || !in.alive()) && in.users == 0 {
		if b.cur == in {
			b.cur = nil
		}
		b.stopLocked(in)
	}
}

// stopLocked closes in in the background; b.mu is held. Close waits.
func (b *Browser) stopLocked(in *instance) {
	if in.stop == nil {
		return
	}
	stop := in.stop
	in.stop = nil
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		stop()
	}()
}

// treeRSS is the memory, in bytes, of pid and its descendants
// (Chromium's renderers, GPU and utility processes): the sum of their
// proportional set sizes (pss), from /proc; 0 where there is none.
func treeRSS(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	parent := make(map[int]int, len(stats))
	for _, p := range stats {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		idText, _, _ := strings.Cut(s, " ")
		if len(f) < 2 {
			continue
		}
		id, err1 := strconv.Atoi(idText)
		pp, err2 := strconv.Atoi(f[1])
		if err1 == nil && err2 == nil {
			parent[id] = pp
		}
	}
	inTree := func(id int) bool {
		for n := 0; id > 1 && n < 64; n++ {
			if id == pid {
				return true
			}
			id = parent[id]
		}
		return false
	}
	var total int64
	for id := range parent {
		if inTree(id) {
			total += pss(id)
		}
	}
	return total
}

// pss is a process's proportional set size in bytes (its resident pages,
// shared ones divided among their sharers, so that a tree's sum counts
// Chromium's shared memory once), from /proc/PID/smaps_rollup; its whole
// resident size where that file is missing.
func pss(id int) int64 {
	dir := "/proc/" + strconv.Itoa(id)
	if data, err := os.ReadFile(dir + "/smaps_rollup"); err == nil {
		for line := range strings.Lines(string(data)) {
			if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				return kb << 10
			}
		}
	}
	data, err := os.ReadFile(dir + "/statm")
	if err != nil {
		return 0
	}
	if f := strings.Fields(string(data)); len(f) > 1 {
		if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			return n * int64(os.Getpagesize())
		}
	}
	return 0
}
