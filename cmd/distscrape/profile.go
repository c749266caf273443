package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
)

// startProfiles writes a CPU profile to $DISTSCRAPE_CPUPROFILE and an
// allocation profile to $DISTSCRAPE_MEMPROFILE when they are set (%p in
// either is the process id): the benchmarks (bench/, make bench) profile
// a real crawl this way. Not a user feature, so not in --help. The
// returned func finishes the profiles.
func startProfiles() (stop func()) {
	// One file per process: a fleet's workers on one machine.
	pid := strconv.Itoa(os.Getpid())
	cpuPath := strings.ReplaceAll(os.Getenv("DISTSCRAPE_CPUPROFILE"), "%p", pid)
	memPath := strings.ReplaceAll(os.Getenv("DISTSCRAPE_MEMPROFILE"), "%p", pid)
	var cpu *os.File
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		if err == nil {
			if err = pprof.StartCPUProfile(f); err == nil {
				cpu = f
			} else {
				f.Close()
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "distscrape: cpu profile:", err)
		}
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		if memPath != "" {
			if err := writeProfile("allocs", memPath); err != nil {
				fmt.Fprintln(os.Stderr, "distscrape: alloc profile:", err)
			}
		}
	}
}

func writeProfile(name, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
