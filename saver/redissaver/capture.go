package redissaver

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/saver"
)

// CaptureKey is the key of the capture of kind of the page at key: the
// page's key plus saver.CaptureSuffix (KEY%.pdf, KEY%.png), a string
// holding the capture's bytes, with the page's TTL; "" for an unknown
// kind. It is no hash, so a reader of pages (Walk) never takes it for one.
func CaptureKey(key, kind string) string {
	suffix := saver.CaptureSuffix(kind)
	if suffix == "" {
		return ""
	}
	return key + suffix
}

// redisCapture is one capture to write.
type redisCapture struct {
	key  string
	data []byte
}

// captureWrites fills w's captures from p's, and names the capture keys of
// the kinds p has none of, which an earlier save may have left: a page's
// captures are always its last save's (no versions are kept).
func captureWrites(w *redisWrite, p *saver.Page) {
	for _, kind := range saver.CaptureKinds {
		key := CaptureKey(w.key, kind)
		var data []byte
		for _, c := range p.Captures {
			if c.Kind == kind {
				data = c.Data
			}
		}
		if data == nil {
			w.staleCaptures = append(w.staleCaptures, key)
			continue
		}
		w.captures = append(w.captures, redisCapture{key: key, data: data})
		w.size += len(key) + len(data)
	}
}

// queueCaptures adds w's capture writes to pipe.
func (r *Saver) queueCaptures(ctx context.Context, pipe redis.Pipeliner, w redisWrite) {
	for _, c := range w.captures {
		// SET replaces an older TTL, or clears it when r.ttl is 0, as for the page.
		pipe.Set(ctx, c.key, c.data, r.ttl)
	}
	if len(w.staleCaptures) > 0 {
		pipe.Unlink(ctx, w.staleCaptures...)
	}
}
