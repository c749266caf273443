package redissink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/redact"
	"github.com/distscrape/distscrape/record"
)

// ErrEvicting: the server may evict keys (a maxmemory-policy other than
// noeviction), which would drop records without a word.
var ErrEvicting = errors.New("redissink: the redis server evicts keys")

// conn is a client and what its errors must not show.
type conn struct {
	c     redis.UniversalClient
	red   *redact.Redactor // hides the URL's password
	where string           // the server(s), for messages
}

// dial opens a client for a records.url: a cluster client when the URL
// names more nodes with addr= parameters (go-redis's ParseClusterURL form,
// redis://h1:7000?addr=h2:7001&addr=h3:7002), else a single server's.
// Nothing is sent yet; errors never show the password.
func dial(raw string) (*conn, error) {
	var pw string
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		pw, _ = u.User.Password()
	}
	c := &conn{red: redact.New(pw)}
	if isClusterURL(raw) {
		opt, err := redis.ParseClusterURL(raw)
		if err != nil {
			// go-redis quotes the URL, password included: never wrap its error.
			return nil, fmt.Errorf("redissink: redis cluster URL %s: %w", redact.URL(raw), redact.ParseError(raw, redis.ParseClusterURL))
		}
		c.c, c.where = redis.NewClusterClient(opt), "cluster "+strings.Join(opt.Addrs, ",")
		return c, nil
	}
	opt, err := redis.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("redissink: redis URL %s: %w", redact.URL(raw), redact.ParseError(raw, redis.ParseURL))
	}
	c.c, c.where = redis.NewClient(opt), opt.Addr
	return c, nil
}

// isClusterURL reports whether a URL names a Redis Cluster: it has an addr=
// parameter (a single server's URL has no use for one).
func isClusterURL(raw string) bool {
	_, query, ok := strings.Cut(raw, "?")
	if !ok {
		return false
	}
	q, err := url.ParseQuery(query)
	return err == nil && q.Has("addr")
}

// wrap dresses an error of the server: ErrUnavailable when a later try may
// get through (classify), and the password hidden from its text.
func (c *conn) wrap(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	return c.red.Error(classify(ctx, err))
}

// ping connects: its error wraps record.ErrUnavailable when the server
// cannot be reached.
func (c *conn) ping(ctx context.Context) error {
	if err := c.c.Ping(ctx).Err(); err != nil {
		return c.wrap(ctx, fmt.Errorf("redissink: connect to %s: %w", c.where, err))
	}
	return nil
}

func (c *conn) close() { c.c.Close() }

// busyReplies start the replies of a server that cannot take the command
// now but may soon: loading its data, running a long script, failing over,
// out of memory or unable to persist (a full disk), a cluster resharding.
var busyReplies = []string{"LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "READONLY", "OOM",
	"NOREPLICAS", "MISCONF", "ERR max number of clients reached"}

// classify wraps record.ErrUnavailable around err when the server did not
// take the command and a later try may: no connection, a connection lost,
// a server busy (busyReplies).
func classify(ctx context.Context, err error) error {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, redis.ErrClosed) {
		return err
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		for _, p := range busyReplies {
			if strings.HasPrefix(rerr.Error(), p) {
				return fmt.Errorf("%w: %w", record.ErrUnavailable, err)
			}
		}
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, redis.ErrPoolTimeout) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return fmt.Errorf("%w: %w", record.ErrUnavailable, err)
	}
	return err
}

// checkServers refuses what would lose records quietly or fail each write:
// a server that evicts keys, and a Redis Cluster node named as a single
// server (it would answer MOVED). On a cluster every master is checked: a
// crawl's slot may be on any of them, and move.
func (c *conn) checkServers(ctx context.Context) error {
	switch cl := c.c.(type) {
	case *redis.Client:
		addr := cl.Options().Addr
		if info, err := cl.Info(ctx, "cluster").Result(); err == nil && strings.Contains(info, "cluster_enabled:1") {
			return fmt.Errorf("redissink: redis at %s is a Redis Cluster node: name the cluster in records.url with addr= parameters (redis://%s?addr=host2:port2&addr=host3:port3)", addr, addr)
		}
		return c.red.Error(checkEviction(ctx, cl))
	case *redis.ClusterClient:
		return c.red.Error(cl.ForEachMaster(ctx, checkEviction))
	}
	return fmt.Errorf("redissink: unsupported redis client %T", c.c)
}

// checkEviction refuses a server with a maxmemory-policy other than
// noeviction; one that forbids CONFIG GET (a managed Redis) is trusted,
// with a warning.
func checkEviction(ctx context.Context, c *redis.Client) error {
	addr := c.Options().Addr
	res, err := c.ConfigGet(ctx, "maxmemory-policy").Result()
	var rerr redis.Error
	switch {
	case errors.As(err, &rerr):
		slog.Warn("redissink: cannot read maxmemory-policy (CONFIG GET not permitted); make sure it is noeviction, or evicted keys are lost records",
			"addr", addr, "err", err)
		return nil
	case err != nil:
		return classify(ctx, fmt.Errorf("redissink: redis at %s: config get maxmemory-policy: %w", addr, err))
	}
	if policy, ok := res["maxmemory-policy"]; ok && policy != "noeviction" {
		return fmt.Errorf("%w: %s has maxmemory-policy %s; set it to noeviction (CONFIG SET maxmemory-policy noeviction, or in redis.conf)",
			ErrEvicting, addr, policy)
	}
	return nil
}
