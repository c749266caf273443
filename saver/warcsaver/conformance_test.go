package warcsaver_test

import (
	"testing"

	"github.com/distscrape/distscrape/saver/savertest"
)

// TestConformance runs the saver contract on the WARC saver, read back and
// validated by internal/testkit/warctest.
func TestConformance(t *testing.T) {
	savertest.Run(t, warcTarget)
}
