package saver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// CheckFile validates cfg as NewFile does and checks that the directory is
// writable (or can be created), creating and changing nothing: what a
// read-only command (distscrape check) needs before a crawl.
func CheckFile(cfg FileConfig) error {
	_, root, err := fileConfig(cfg)
	if err != nil {
		return err
	}
	if err := checkWritableDir(root); err != nil {
		return fmt.Errorf("file saver: %w", err)
	}
	return nil
}

// CheckTar is CheckFile for a tar archive: the path template, the
// extension, and the archive's directory.
func CheckTar(cfg TarConfig) error {
	path, _, err := tarConfig(cfg)
	if err != nil {
		return err
	}
	if err := checkWritableDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("tar saver: %w", err)
	}
	return nil
}

// CheckWARC is CheckFile for the WARC saver: its settings and directory.
func CheckWARC(cfg WARCConfig) error {
	cfg, err := warcConfig(cfg)
	if err != nil {
		return err
	}
	if err := checkWritableDir(cfg.Dir); err != nil {
		return fmt.Errorf("warc saver: %w", err)
	}
	return nil
}

// ErrNotWritable is returned by CheckFile, CheckTar and CheckWARC for an output
// directory the saver could not write to.
var ErrNotWritable = errors.New("not writable")

// checkWritableDir looks at dir, or at its nearest existing parent when the
// saver would create it: it must be a directory this process may write.
func checkWritableDir(dir string) error {
	for p := dir; ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist) && filepath.Dir(p) != p:
			continue // created on the first save
		case err != nil:
			return err
		case !st.IsDir():
			return fmt.Errorf("%s is not a directory", p)
		}
		if err := writable(p); err != nil {
			return fmt.Errorf("%s: %w: %w", p, ErrNotWritable, err)
		}
		return nil
	}
}
