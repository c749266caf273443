package redistracker

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/redact"
)

// Dial opens a client for a tracker URL: a *redis.ClusterClient when the
// URL names more nodes through addr= parameters (go-redis's ParseClusterURL
// form, redis://h1:7000?addr=h2:7001&addr=h3:7002), else a *redis.Client.
// Both take the same user, password and rediss:// TLS. Errors never show
// the password.
func Dial(raw string) (redis.UniversalClient, error) {
	if IsClusterURL(raw) {
		opt, err := redis.ParseClusterURL(raw)
		if err != nil {
			// go-redis quotes the URL, password included: never wrap its error.
			return nil, fmt.Errorf("tracker: redis cluster URL %s: %w", redact.URL(raw), redact.ParseError(raw, redis.ParseClusterURL))
		}
		return redis.NewClusterClient(opt), nil
	}
	opt, err := redis.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("tracker: redis URL %s: %w", redact.URL(raw), redact.ParseError(raw, redis.ParseURL))
	}
	return redis.NewClient(opt), nil
}

// IsClusterURL reports whether a tracker URL names a Redis Cluster: it has
// an addr= query parameter (a single-node URL has no use for one).
func IsClusterURL(raw string) bool {
	_, query, ok := strings.Cut(raw, "?")
	if !ok {
		return false
	}
	q, err := url.ParseQuery(query)
	return err == nil && q.Has("addr")
}

// clientAddr names the server(s) in errors and logs (never a password).
func clientAddr(c redis.UniversalClient) string {
	switch c := c.(type) {
	case *redis.Client:
		return c.Options().Addr
	case *redis.ClusterClient:
		return "cluster " + strings.Join(c.Options().Addrs, ",")
	}
	return "redis"
}

// checkEveryMaster refuses an evicting policy or a replica on every node
// that takes writes: on a cluster every master, since a crawl's slot may
// be on any of them, and move.
func (r *Tracker) checkEveryMaster(ctx context.Context) error {
	switch c := r.c.(type) {
	case *redis.Client:
		addr := c.Options().Addr
		// A cluster node reached as a single server answers MOVED for every
		// slot it does not own: say how to write the URL instead.
		if info, err := c.Info(ctx, "cluster").Result(); err == nil && strings.Contains(info, "cluster_enabled:1") {
			return fmt.Errorf("tracker: redis at %s is a Redis Cluster node: name the cluster in tracker.url with addr= parameters (redis://%s?addr=host2:port2&addr=host3:port3)", addr, addr)
		}
		if err := r.checkEviction(ctx, c, addr); err != nil {
			return err
		}
		return r.checkPrimary(ctx, c, addr)
	case *redis.ClusterClient:
		// The callbacks' errors name their node and are returned as they
		// are (the cluster's slots were loaded by the Ping before).
		return c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			if err := r.checkEviction(ctx, m, m.Options().Addr); err != nil {
				return err
			}
			return r.checkPrimary(ctx, m, m.Options().Addr)
		})
	}
	return fmt.Errorf("tracker: unsupported redis client %T: want a *redis.Client or a *redis.ClusterClient", r.c)
}

// slotNode is the node that holds the crawl's hash slot, for the commands
// a cluster client cannot route by key (SCAN).
func (r *Tracker) slotNode(ctx context.Context) (*redis.Client, error) {
	switch c := r.c.(type) {
	case *redis.ClusterClient:
		return c.MasterForKey(ctx, r.keys.key(keyCrawl))
	case *redis.Client:
		return c, nil
	}
	return nil, fmt.Errorf("unsupported redis client %T", r.c)
}

// afterConnError asks a cluster client to learn the slots again after a
// call failed on the connection: go-redis otherwise keeps sending a dead
// master's slots to it until its periodic refresh (measured: 55 s after a
// failover that took 4.5 s; TestClusterFailover).
func (r *Tracker) afterConnError(err error) {
	var rerr redis.Error
	if cc, ok := r.c.(*redis.ClusterClient); ok && !errors.As(err, &rerr) {
		cc.ReloadState(context.Background())
	}
}
