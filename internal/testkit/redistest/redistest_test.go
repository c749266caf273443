package redistest

import (
	"context"
	"testing"
)

func TestStartRestartAOF(t *testing.T) {
	s := Start(t, Options{AOF: true, AppendFsync: "always"})
	ctx := context.Background()
	c := s.Client(t)
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Restart(t)
	c2 := s.Client(t)
	got, err := c2.Get(ctx, "k").Result()
	if err != nil || got != "v" {
		t.Fatalf("after restart on the same AOF: got %q, %v; want v", got, err)
	}
	policy, err := c2.ConfigGet(ctx, "maxmemory-policy").Result()
	if err != nil || policy["maxmemory-policy"] != "noeviction" {
		t.Fatalf("policy = %v, %v", policy, err)
	}
}

func TestPassword(t *testing.T) {
	s := Start(t, Options{Password: "s3cret"})
	if err := s.Client(t).Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}
