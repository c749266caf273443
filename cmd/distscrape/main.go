// Command distscrape is a distributed scraper and crawler: a central tracker
// leases URLs or IDs to stateless workers that fetch, scrape and save them.
//
// See README.md for the commands and the config file.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/tracker"
)

// Exit codes (docs/architecture.md, "Command line").
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
	// exitDeadLetters: crawl or worker saw the crawl end (done, or a
	// limit) with pages lost to dead letters.
	exitDeadLetters = 3
)

// version, when set with -ldflags "-X main.version=...", overrides the
// module version from the build info.
var version = "dev"

// usageError marks bad usage (exit 2) as opposed to a runtime failure (exit 1).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func main() {
	stopProfiles := startProfiles() // benchmarks only (profile.go)
	code := run(os.Args, os.Stdin)
	stopProfiles()
	os.Exit(code)
}

// signalStop is the cause of the context's end when a signal stopped us.
type signalStop struct{ sig syscall.Signal }

func (s signalStop) Error() string { return "stopped by " + signalName(s.sig) }

func signalName(sig syscall.Signal) string {
	if sig == syscall.SIGINT {
		return "SIGINT"
	}
	return "SIGTERM"
}

// stoppedError is a worker stopped by a signal before the crawl was done:
// exit 128+signal (130 for SIGINT, 143 for SIGTERM), as shells report it,
// so that a script can tell it from a finished crawl (0).
type stoppedError struct {
	sig  syscall.Signal
	left *tracker.Stats // nil when the tracker could not say
}

func (e stoppedError) Error() string {
	left := ""
	if e.left != nil {
		left = fmt.Sprintf(" (%d pending, %d leased, %d delayed)", e.left.Pending, e.left.Leased, e.left.Delayed)
	}
	return fmt.Sprintf("%s before the crawl was done%s; run again to continue", signalStop{e.sig}, left)
}

func (e stoppedError) ExitCode() int { return 128 + int(e.sig) }

func run(args []string, stdin *os.File) int {
	// The first SIGINT/SIGTERM asks for a graceful stop; a second one exits at once.
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(ch)
	go func() {
		sig := <-ch
		if s, ok := sig.(syscall.Signal); ok {
			cancel(signalStop{s})
		}
		<-ch // exit with our own message and code
		printExitError("second signal, exiting at once")
		os.Exit(exitRuntime)
	}()

	app := newApp(stdin)
	err := app.RunContext(ctx, args)
	return exitCode(err)
}

func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	err = redactor.Error(err)
	var ec cli.ExitCoder
	switch {
	case errors.As(err, &ec):
		if msg := err.Error(); msg != "" {
			printExitError(msg)
		}
		return ec.ExitCode()
	case errors.Is(err, config.ErrInvalid), errors.As(err, new(usageError)):
		printExitError(err.Error())
		return exitUsage
	default:
		printExitError(err.Error())
		return exitRuntime
	}
}

var configFlag = &cli.StringFlag{
	Name:    "config",
	Aliases: []string{"c"},
	Usage:   "the crawl's YAML config `FILE`",
	EnvVars: []string{"DISTSCRAPE_CONFIG"},
}

func newApp(stdin *os.File) *cli.App {
	app := &cli.App{
		Name:                 "distscrape",
		Usage:                "a distributed scraper and crawler",
		Version:              versionString(),
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		Description: `A tracker leases URLs or IDs to workers; each worker fetches them politely,
finds new items with a scraper, saves the bodies, and reports back.
One machine:  distscrape crawl -c crawl.yaml
A fleet:      distscrape seed -c fleet.yaml; then on every machine: distscrape worker -c fleet.yaml`,
		// Usage errors from flag parsing exit 2 as well.
		OnUsageError: commandUsageError,
		Commands: []*cli.Command{
			crawlCommand(), tryCommand(), seedCommand(stdin), workerCommand(), requeueCommand(), pauseCommand(), resumeCommand(), statusCommand(),
			failedCommand(), lookupCommand(), waczCommand(), recrawlCommand(), extractCommand(), dashboardCommand(), resetCommand(), checkCommand(), versionCommand(), completionCommand(),
		},
		ExitErrHandler:  func(*cli.Context, error) {}, // main decides the exit code
		CommandNotFound: commandNotFound,
	}
	for _, cmd := range app.Commands {
		cmd.OnUsageError = commandUsageError
	}
	return app
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version, the commit it was built from, and the Go version",
		Action: func(*cli.Context) error {
			fmt.Println("distscrape " + versionString())
			return nil
		},
	}
}

// versionString is the module version (v1.2.0 when installed with go
// install ...@v1.2.0, "(devel)" in a clone) and the commit go build
// stamped, so a bug report says exactly which code ran.
func versionString() string {
	bi, _ := debug.ReadBuildInfo()
	return describeBuild(version, bi)
}

// describeBuild is versionString for given build info (nil: none).
func describeBuild(v string, bi *debug.BuildInfo) string {
	b := buildOf(v, bi)
	commit := ""
	if b.rev != "" {
		commit = fmt.Sprintf("commit %.12s%s%s, ", b.rev, b.at, b.dirty)
	}
	return fmt.Sprintf("%s (%s%s, %s/%s)", b.version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// build is what go build stamped: the module version and the commit.
type build struct{ version, rev, at, dirty string }

func buildOf(v string, bi *debug.BuildInfo) build {
	b := build{version: v}
	if bi == nil {
		return b
	}
	if v == "dev" && bi.Main.Version != "" {
		b.version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.rev = s.Value
		case "vcs.time":
			b.at = " " + s.Value
		case "vcs.modified":
			if s.Value == "true" {
				b.dirty = ", modified"
			}
		}
	}
	return b
}
