// Package memtracker is the in-memory tracker.Engine: the whole work-item
// contract (leases with expiry and fencing tokens, backoff, dead letters,
// numeric ranges, exact dedup) inside one process, the default of
// `distscrape crawl`. With Config.StatePath every change is journaled to a
// file, so a crashed crawl resumes where it stopped; OpenReadOnly reads such
// a state without ever writing it (the status, failed and check commands).
//
// A damaged state file (a bad frame with valid ones after it, a journal
// without its snapshot) is refused with ErrDamaged, never cut short. The
// state of a running crawl lives in its process: a state file deleted or
// damaged under it loses nothing while it runs (the next compaction writes
// the whole state again), so tracker.ErrStateLost, the Redis engine's
// "state vanished" error, has no counterpart here.
//
// A done item with a revisit due (Completion.Revisit) keeps its key, depth,
// meta, visits and validators in the revisit index (revisit.go): a heap by
// due time and a map by key, about 190 bytes beside the key (measured with a
// 15-byte ETag and a Last-Modified), for those items
// only. Recrawl (recrawl.go) covers the ID ranges and that index.
//
// It imports the tracker contract only: never go-redis, never another engine.
// The conformance suite in tracker/trackertest proves it.
package memtracker
