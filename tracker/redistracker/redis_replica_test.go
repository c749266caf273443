package redistracker_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
	"github.com/distscrape/distscrape/tracker/redistracker"
)

// A replica is refused at start with an error that says so (it used to be
// "EXECABORT Transaction discarded"), and nothing is written anywhere.
func TestRedisRefusesReplica(t *testing.T) {
	primary := redistest.Start(t, redistest.Options{})
	replica := redistest.Start(t, redistest.Options{Args: []string{"--replicaof", "127.0.0.1", strconv.Itoa(primary.Port)}})
	_, err := redistracker.New(context.Background(), redistracker.Config{URL: replica.URL(0), Crawl: "replica"})
	if !errors.Is(err, redistracker.ErrReplica) || !strings.Contains(err.Error(), "primary") {
		t.Fatalf("New on a replica: %v, want ErrReplica naming the fix", err)
	}
	if n := primary.Client(t).DBSize(context.Background()).Val(); n != 0 {
		t.Fatalf("the primary holds %d keys after a refused start", n)
	}
}
