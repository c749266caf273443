// Package drivertest holds the test helpers the saver drivers share: a
// child process killed mid-write, the worker names that try to leave
// their folder, and the benchmark of a saver.
package drivertest

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BadWorkers are the ways a worker name can try to leave its folder. The
// command and the manager refuse them (tracker.ValidateWorker); a saver,
// which imports no other distscrape package, must stay safe with any name
// a library user passes.
var BadWorkers = []string{"..", ".", "", "a/b", `a\b`, "-x", ".hidden", "a\x00b", "a\nb", "wörker", "{crawl}", "../../x", strings.Repeat("w", 300)}

// KillChild runs this test binary's test named test as a child process
// with env=value set (the child's cue to play its part), reads lines lines
// of its output, kills it with SIGKILL and returns the number the first
// line reports ("flushed N").
func KillChild(t *testing.T, test, env, value string, lines int) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+value)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(stdout)
	var first string
	for i := 0; i < lines && err == nil; i++ {
		var line string
		line, err = rd.ReadString('\n')
		if i == 0 {
			first = line
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if err != nil || !strings.HasPrefix(first, "flushed ") {
		t.Fatalf("child said %q, %v", first, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(first, "flushed ")))
	if err != nil {
		t.Fatalf("child said %q", first)
	}
	return n
}
