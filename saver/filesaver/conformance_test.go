package filesaver_test

import (
	"testing"

	"github.com/distscrape/distscrape/saver/savertest"
)

// TestConformance runs the saver contract on both layouts, read back from
// the directory and the manifest.
func TestConformance(t *testing.T) {
	for _, layout := range []string{"mirror", "flat"} {
		t.Run(layout, func(t *testing.T) {
			t.Parallel()
			savertest.Run(t, func(t *testing.T) *savertest.Target { return fileTarget(t, layout) })
		})
	}
}
