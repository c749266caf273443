package redistest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/testkit/shared"
)

// ClusterOptions configure a private Redis Cluster. The zero value is three
// masters without replicas, noeviction.
type ClusterOptions struct {
	// Replicas gives each master one replica (failover tests).
	Replicas bool
	// Node configures every node (policy, password, extra args).
	Node Options
}

// Cluster is a running private Redis Cluster of three masters on 127.0.0.1,
// created with redis-cli --cluster create, as an operator would.
type Cluster struct {
	Masters  []*Server
	Replicas []*Server // one per master when ClusterOptions.Replicas, else none
	opts     ClusterOptions
}

// clusterReady bounds how long creating the cluster and its convergence may take.
const clusterReady = 60 * time.Second

// StartCluster starts three masters (and a replica each if asked), creates
// the cluster and waits until every node reports cluster_state:ok and knows
// every other node. Processes and directories go away when the test ends.
func StartCluster(t testing.TB, opts ClusterOptions) *Cluster {
	t.Helper()
	c, err := newCluster(opts, func(o Options) (*Server, error) { return Start(t, o), nil })
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	return c
}

// LaunchCluster starts a cluster outside a test (a package's shared cluster,
// benchmark programs) in subdirectories of dir, which must exist. The caller
// stops it with Kill.
func LaunchCluster(opts ClusterOptions, dir string) (*Cluster, error) {
	var all []*Server
	c, err := newCluster(opts, func(o Options) (*Server, error) {
		d := filepath.Join(dir, fmt.Sprint("node", len(all)))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
		s, err := Launch(o, d)
		if err == nil {
			all = append(all, s)
		}
		return s, err
	})
	if err != nil {
		for _, s := range all {
			s.Kill()
		}
		return nil, err
	}
	return c, nil
}

func newCluster(opts ClusterOptions, start func(Options) (*Server, error)) (*Cluster, error) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, fmt.Errorf("redis-cli not found in PATH: it ships with redis-server (apt-get install -y redis-server, or `make deps`)")
	}
	node := opts.Node
	node.clusterNode = true
	c := &Cluster{opts: opts}
	n := 3
	if opts.Replicas {
		n = 6
	}
	var addrs []string
	for i := 0; i < n; i++ {
		s, err := start(node)
		if err != nil {
			return nil, err
		}
		if i < 3 {
			c.Masters = append(c.Masters, s)
		} else {
			c.Replicas = append(c.Replicas, s)
		}
		addrs = append(addrs, s.Addr())
	}
	// redis-cli makes the first three the masters and the rest their replicas.
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(len(c.Replicas)/3), "--cluster-yes")
	if node.Password != "" {
		args = append(args, "--no-auth-warning", "-a", node.Password)
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterReady)
	defer cancel()
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("redis-cli --cluster create: %w\n%s", err, shared.Tail(string(out)))
	}
	return c, c.WaitReady(ctx)
}

// Kill stops every node (SIGKILL).
func (c *Cluster) Kill() {
	for _, s := range c.Nodes() {
		s.Kill()
	}
}

// Nodes are the masters then the replicas.
func (c *Cluster) Nodes() []*Server { return append(append([]*Server{}, c.Masters...), c.Replicas...) }

// WaitReady waits until every node reports cluster_state:ok, all slots
// assigned and every node known, and every replica has its master's data
// (master_link_status:up: a replica that never synced refuses to fail
// over). A condition polled, not a sleep.
func (c *Cluster) WaitReady(ctx context.Context) error {
	nodes := c.Nodes()
	want := fmt.Sprintf("cluster_known_nodes:%d", len(nodes))
	for i, s := range nodes {
		replica := i >= len(c.Masters)
		cl := redis.NewClient(&redis.Options{Addr: s.Addr(), Password: c.opts.Node.Password, MaxRetries: -1})
		var last string
		for {
			info, err := cl.ClusterInfo(ctx).Result()
			if err == nil && replica {
				var repl string
				repl, err = cl.Info(ctx, "replication").Result()
				info += repl
			}
			if err == nil && strings.Contains(info, "cluster_state:ok") &&
				strings.Contains(info, "cluster_slots_ok:16384") && strings.Contains(info, want) &&
				(!replica || strings.Contains(info, "master_link_status:up")) {
				break
			}
			last = fmt.Sprint(info, err)
			select {
			case <-ctx.Done():
				cl.Close()
				return fmt.Errorf("cluster node %s not ready: %s", s.Addr(), strings.TrimSpace(last))
			case <-time.After(50 * time.Millisecond):
			}
		}
		cl.Close()
	}
	return nil
}

// URL is the cluster's tracker.url the way go-redis writes one
// (redis.ParseClusterURL): the first master, the others as addr= params.
func (c *Cluster) URL() string {
	u := url.URL{Scheme: "redis", Host: c.Masters[0].Addr()}
	if c.opts.Node.Password != "" {
		u.User = url.UserPassword("", c.opts.Node.Password)
	}
	q := url.Values{}
	for _, s := range c.Masters[1:] {
		q.Add("addr", s.Addr())
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Client returns a cluster client, closed when the test ends.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	var addrs []string
	for _, s := range c.Masters {
		addrs = append(addrs, s.Addr())
	}
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Password: c.opts.Node.Password})
	t.Cleanup(func() { cl.Close() })
	return cl
}

// freePort is a free port; for a cluster node, one whose bus port
// (port+10000) is free as well.
func (s *Server) freePort() (int, error) {
	if !s.opts.clusterNode {
		return FreePort()
	}
	for i := 0; i < 100; i++ {
		p, err := FreePort()
		if err != nil {
			return 0, err
		}
		if p+10000 > 65535 {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p+10000)))
		if err != nil {
			continue
		}
		l.Close()
		return p, nil
	}
	return 0, fmt.Errorf("no free port whose bus port (+10000) is free too")
}
