package tracker_test

import (
	"testing"

	"github.com/distscrape/distscrape/tracker/trackertest"
)

// BenchmarkLifecycle: add → checkout → complete, batches of 64, per
// implementation. Run: go test -run XXX -bench Lifecycle ./tracker/...
func BenchmarkLifecycle(b *testing.B) {
	for _, impl := range implementations {
		b.Run(impl.name, func(b *testing.B) { trackertest.Bench(b, impl.new) })
	}
}
