package dashboard

import (
	"context"
	"time"
)

// QuarantinedProxy is a proxy the fleet holds in quarantine (a worker's
// start check or repeated connection failures took it out of use).
type QuarantinedProxy struct {
	URL       string    `json:"url"` // its password redacted
	Country   string    `json:"country,omitempty"`
	Until     time.Time `json:"until"`
	LastError string    `json:"last_error,omitempty"`
	By        string    `json:"by,omitempty"` // the worker that quarantined it
}

// ProxyQuarantine lists the proxies in quarantine now, as status does
// (the command line reads the tracker's shared values). A crawl's
// proxies are few: each tick reads them all.
type ProxyQuarantine func(ctx context.Context) ([]QuarantinedProxy, error)

// proxiesView is the overview's quarantined proxies in a Snapshot.
type proxiesView struct {
	Quarantined []QuarantinedProxy `json:"quarantined"`
	Error       string             `json:"error,omitempty"`
}

// proxies reads the quarantined proxies; nil without Config.Proxies.
func (s *Server) proxies(ctx context.Context) *proxiesView {
	if s.cfg.Proxies == nil {
		return nil
	}
	v := &proxiesView{Quarantined: []QuarantinedProxy{}}
	list, err := s.cfg.Proxies(ctx)
	if err != nil {
		v.Error = s.cfg.Redact(err.Error())
	}
	for _, p := range list {
		p.URL, p.LastError = s.cfg.Redact(p.URL), s.cfg.Redact(p.LastError)
		v.Quarantined = append(v.Quarantined, p)
	}
	return v
}
