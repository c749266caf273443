// Package memtracker is the in-memory tracker.Engine: the whole work-item
// contract (leases with expiry and fencing tokens, backoff, dead letters,
// numeric ranges, exact dedup) inside one process, the default of
// `distscrape crawl`. With Config.StatePath every change is journaled to a
// file, so a crashed crawl resumes where it stopped.
//
// It imports the tracker contract only: never go-redis, never another engine.
// The conformance suite in tracker/trackertest proves it.
package memtracker
