package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/distscrape/distscrape/tracker"
)

// pauseCommand and resumeCommand steer a fleet: while paused the tracker
// hands out no lease; workers finish what they hold, keep heartbeating and
// wait (tracker.ErrPaused).
func pauseCommand() *cli.Command {
	return steerCommand("pause", "stop the fleet from starting new items (what is in flight finishes); undo with resume",
		func(c *cli.Context, tr tracker.Engine, by string) error { return tr.Pause(c.Context, by) })
}

func resumeCommand() *cli.Command {
	return steerCommand("resume", "let a paused fleet start new items again",
		func(c *cli.Context, tr tracker.Engine, by string) error { return tr.Resume(c.Context, by) })
}

func steerCommand(name, usage string, act func(*cli.Context, tracker.Engine, string) error) *cli.Command {
	return &cli.Command{
		Name:  name,
		Usage: usage,
		Description: `Examples:
   distscrape pause -c fleet.yaml    # workers finish their leases, then wait
   distscrape status -c fleet.yaml   # PAUSED since ... by ...
   distscrape resume -c fleet.yaml`,
		Flags: []cli.Flag{configFlag},
		Action: func(c *cli.Context) error {
			tr, err := adminTracker(c, name, false)
			if err != nil {
				return err
			}
			defer tr.Close()
			by := operator()
			if err := act(c, tr, by); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			// The tracker keeps who paused (status shows it); the log keeps
			// both actions, with where they came from, at warn so that a
			// fleet's usual log.level shows them.
			slog.Warn("crawl "+name+"d", "by", by, "pid", os.Getpid())
			st, err := tr.Stats(c.Context)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			fmt.Fprintln(os.Stdout, pauseLine(st, time.Now(), resumeCmd(c)))
			return nil
		},
	}
}

// operator names who runs this command: user@host (what Stats.PausedBy
// shows), from the OS, never from anything secret.
func operator() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		name = "uid" + strconv.Itoa(os.Getuid())
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return name + "@" + host
}

// pauseLine says whether the crawl is paused, since when and by whom, and
// the command line that resumes it.
func pauseLine(st tracker.Stats, now time.Time, resume string) string {
	if !st.Paused {
		return "crawl running (not paused)"
	}
	return fmt.Sprintf("PAUSED since %s (%s ago) by %s; resume with: %s",
		st.PausedAt.Local().Format(time.DateTime), max(now.Sub(st.PausedAt), 0).Round(time.Second), st.PausedBy, resume)
}

// resumeCmd is the command line that resumes this command's crawl: its
// config named as it was given (-c or DISTSCRAPE_CONFIG), quoted for a shell.
func resumeCmd(c *cli.Context) string {
	return "distscrape resume -c " + shellQuote(c.String("config"))
}
