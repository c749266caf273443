package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/distscrape/distscrape/internal/app/config"
)

// installLogger builds the one logger of the process from the config (call
// it once redactor is set: every line is redacted) and
// makes it the destination of every line: slog.Default (for any library
// left on it) and go-redis's own logger, which otherwise prints plain
// "redis: pool.go:770: ..." lines to stderr, breaking log.format: json.
func installLogger(cfg config.Log) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Level)) // validated by config
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		return redactor.ReplaceAttr(groups, durationString(groups, a))
	}}
	var log *slog.Logger
	if cfg.Format == "json" {
		log = slog.New(slog.NewJSONHandler(os.Stderr, opts))
	} else {
		log = slog.New(slog.NewTextHandler(os.Stderr, opts))
	}
	slog.SetDefault(log)
	redis.SetLogger(redisLogger{log})
	if cfg.Format == "json" {
		jsonLog.Store(log)
	}
	return log
}

// jsonLog is the logger once log.format: json is known: the error a
// command exits with is then one more JSON line, not plain text.
// (Atomic: the second-signal goroutine reads it.)
var jsonLog atomic.Pointer[slog.Logger]

// printExitError writes the error a command ends with.
func printExitError(msg string) {
	if log := jsonLog.Load(); log != nil {
		log.Error(msg)
		return
	}
	fmt.Fprintln(os.Stderr, "distscrape:", msg)
}

// durationString logs a time.Duration as Go writes it ("200ms"), not as the
// nanoseconds the JSON handler would print (200000000).
func durationString(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}

// redisLogger puts go-redis's messages (dial failures, pool trouble) through slog.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	msg := strings.TrimPrefix(strings.TrimSpace(fmt.Sprintf(format, v...)), "redis: ")
	l.log.WarnContext(ctx, msg, "component", "go-redis")
}

// within prefixes err with the part of the program it came from, unless
// the message already names it: the libraries prefix their own errors
// ("tracker: redis at ..."), and "tracker: tracker: ..." says nothing more.
func within(part string, err error) error {
	if err == nil || strings.HasPrefix(err.Error(), part+": ") || strings.Contains(err.Error(), " "+part+": ") {
		return err
	}
	return fmt.Errorf("%s: %w", part, err)
}
