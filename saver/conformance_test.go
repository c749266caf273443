package saver_test

import (
	"testing"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/savertest"
)

// TestConformance runs the contract on None, the saver that keeps nothing.
// Each driver runs it on itself in its own package (filesaver, tarsaver,
// warcsaver, redissaver, s3saver), with an independent reader of its store.
func TestConformance(t *testing.T) {
	savertest.Run(t, func(*testing.T) *savertest.Target { return &savertest.Target{Saver: saver.None()} })
}
