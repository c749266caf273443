package redistest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestStartCluster: the cluster serves keys of every slot through a cluster
// client, each master owns a share of the slots, and each replica (when
// asked) follows a master.
func TestStartCluster(t *testing.T) {
	cases := []struct {
		name string
		opts ClusterOptions
	}{
		{"three masters", ClusterOptions{}},
		{"with replicas and a password", ClusterOptions{Replicas: true, Node: Options{Password: "pw"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := StartCluster(t, tc.opts)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cl := c.Client(t)
			for i := 0; i < 30; i++ { // keys spread over the three masters' slots
				if err := cl.Set(ctx, fmt.Sprint("k", i), i, 0).Err(); err != nil {
					t.Fatalf("SET through the cluster: %v", err)
				}
			}
			for _, m := range c.Masters {
				n, err := m.Client(t).DBSize(ctx).Result()
				if err != nil || n == 0 {
					t.Errorf("master %s holds %d keys (%v): want a share of them", m.Addr(), n, err)
				}
			}
			for _, r := range c.Replicas {
				info, err := r.Client(t).Info(ctx, "replication").Result()
				if err != nil || !strings.Contains(info, "role:slave") {
					t.Errorf("node %s: want a replica, INFO replication = %q (%v)", r.Addr(), info, err)
				}
			}
			if want := map[bool]int{false: 0, true: 3}[tc.opts.Replicas]; len(c.Replicas) != want {
				t.Errorf("%d replicas, want %d", len(c.Replicas), want)
			}
			if !strings.Contains(c.URL(), "addr=") {
				t.Errorf("URL %q names one node only", c.URL())
			}
		})
	}
}
