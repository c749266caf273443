// Package redistracker is the Redis tracker.Engine that a fleet of workers
// shares: one embedded Lua function per operation (lua/, one Redis
// Functions library, FCALL), every key of a crawl under one hash tag
// (keys.go), compact dedup (bitmaps for numeric IDs, fingerprints for
// URLs), and a fleet-wide per-host request rate (fetch.FleetLimiter). A
// crawl opened with
// Config.Partitions > 1 (Open) is a Partitioned: P of these, each under a
// hash tag of its own, so a Redis Cluster spreads them over its masters.
//
// It imports the tracker contract and go-redis; it must never import
// memtracker, the manager or the command line. The conformance suite in
// tracker/trackertest proves it on a real redis-server.
package redistracker
