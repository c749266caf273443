// Package redistracker is the Redis tracker.Engine that a fleet of workers
// shares: one embedded Lua script per operation (lua/, run with EVALSHA),
// every key of a crawl under one hash tag (keys.go), compact dedup
// (bitmaps for numeric IDs, fingerprints for URLs), and a fleet-wide
// per-host request rate (fetch.FleetLimiter).
//
// It imports the tracker contract and go-redis; it must never import
// memtracker, the manager or the command line. The conformance suite in
// tracker/trackertest proves it on a real redis-server.
package redistracker
