package tarsaver_test

import (
	"strings"
	"testing"

	"github.com/distscrape/distscrape/saver/savertest"
)

// TestConformance runs the saver contract on each compression, read back
// with the system tar and decompressors.
func TestConformance(t *testing.T) {
	for _, ext := range tarExts {
		t.Run(strings.TrimPrefix(ext, "."), func(t *testing.T) {
			t.Parallel()
			savertest.Run(t, func(t *testing.T) *savertest.Target { return tarTarget(t, ext) })
		})
	}
}
