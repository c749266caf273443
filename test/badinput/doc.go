// Package badinput feeds distscrape hostile input, one row of a table per
// input: broken configs, bad seed files and ranges, hostile URLs, hostile
// pages (bombs, endless bodies, slowloris, broken framing, redirect loops,
// ReDoS, huge link counts), a Redis that is down, killed, locked, evicting
// or read-only, and a saver that cannot write. Each row states the clear
// error it expects and checks that nothing was lost and nothing was
// written where it should not be. Everything runs as real processes on
// 127.0.0.1 (and ::1).
package badinput
