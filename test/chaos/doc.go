// Package chaos proves that distscrape loses nothing under faults: real
// worker processes are SIGKILLed and SIGSTOPped, the real redis-server is
// shut down and killed, the fixture site goes away, and at the end every
// page of the site must be saved exactly once and every tracker count must
// add up. Everything runs on 127.0.0.1 and is bounded in time and count.
//
// `go test ./test/chaos` runs a shortened schedule (part of `make test`);
// DISTSCRAPE_CHAOS=full runs the full 60-second schedule of issue 8:
//
//	DISTSCRAPE_CHAOS=full go test ./test/chaos -run Chaos -v
//
// Output duplicates: the file saver writes one file per page and rewrites
// it when a page is redone, so "exactly once" is checked on its output. The
// tar saver is append only: a page redone after a crash or a lost lease is a
// second entry of the same name (tar keeps the last when extracting), so tar
// output may hold duplicates by design; TestChaosTarOutput checks that every
// page is there, with duplicates bounded like the duplicate fetches.
package chaos
