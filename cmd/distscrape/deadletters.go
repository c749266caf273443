package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/distscrape/distscrape/internal/app/config"
	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
	"github.com/distscrape/distscrape/tracker"
)

// writeDeadLetters writes one JSON object per dead letter: the format of
// `failed --json` and of the file a one-process crawl leaves behind.
func writeDeadLetters(w io.Writer, items []tracker.FailedItem) error {
	enc := json.NewEncoder(w)
	for _, it := range items {
		if err := enc.Encode(map[string]any{"item": it.Key, "depth": it.Depth, "attempts": it.Attempts,
			"reason": it.Reason, "at": it.At.UTC().Format(time.RFC3339)}); err != nil {
			return err
		}
	}
	return nil
}

// deadLettersFile is where a crawl whose tracker dies with the process
// keeps its dead letters: next to the output, in the saver's meta folder.
func deadLettersFile(cfg *config.Config, worker string) string {
	base := "."
	if l, ok := cfg.Saver.Driver.(saver.LocalDir); ok {
		base = l.LocalDir(cfg.SaverEnv(worker))
	}
	return filepath.Join(base, filesaver.MetaDir, cfg.Crawl+"-failed.jsonl")
}

// deadLettersLine is the summary's line about the dead letters: where to
// read them. The memory tracker without tracker.state is gone when crawl
// exits, so `distscrape failed` could not show them: they are written out.
func deadLettersLine(ctx context.Context, tr tracker.Engine, cfg *config.Config, worker, cfgPath string, n int64) string {
	if cfg.Tracker.Driver.Shared() {
		return fmt.Sprintf("%d; list them with: distscrape failed -c %s", n, cfgPath)
	}
	path := deadLettersFile(cfg, worker)
	if err := saveDeadLetters(ctx, tr, path); err != nil {
		return fmt.Sprintf("%d; could not write them to %s: %v", n, path, err)
	}
	return fmt.Sprintf("%d, each with its last error, in %s", n, path)
}

func saveDeadLetters(ctx context.Context, tr tracker.Engine, path string) error {
	items, err := tr.Failed(ctx, 0)
	if err != nil {
		return err
	}
	for i := range items {
		items[i].Key, items[i].Reason = redactor.String(items[i].Key), redactor.String(items[i].Reason)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeDeadLetters(f, items); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
