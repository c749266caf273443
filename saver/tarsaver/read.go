package tarsaver

import (
	"archive/tar"
	"bufio"
	"compress/bzip2"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/internal/storekit"
)

// Walk reads back the pages of tar archives the tar saver wrote: path is
// an archive (.tar, .tar.gz, .tgz, .tar.bz2, .tbz2, .tar.zst, .tzst, parts
// such as name-1.tar.gz included) or a directory of them (not its
// subdirectories), read in name order. Each entry with the saver's PAX
// records (PAXKey...) is a page; a page's copies (PAXCaptureOf) are left
// out; other entries are skipped and counted.
// The newest entry of each key is passed to fn (see saver.Walked).
//
// An archive that ends in a truncated or corrupt entry is read up to its
// last complete entry, the other archives still read, and Walk then
// returns an error wrapping saver.ErrDamaged that names each such archive.
func Walk(ctx context.Context, path string, fn saver.WalkFunc) (saver.Walked, error) {
	var w saver.Walked
	files, err := tarFiles(path, &w)
	if err != nil {
		return w, err
	}
	latest := storekit.NewLatest()
	readable := make([]int, len(files))
	var damaged []error
	pos := 0
	for i, name := range files {
		n, err := scanTar(ctx, name, -1, false, func(h *tar.Header, _ []byte, _ error) error {
			if k, ok := h.PAXRecords[PAXKey]; ok {
				latest.See(k, fetchedOf(h), pos)
			}
			pos++
			return nil
		})
		readable[i] = n
		if errors.Is(err, saver.ErrDamaged) {
			damaged = append(damaged, err)
		} else if err != nil {
			return w, err
		}
	}
	pos = 0
	for i, name := range files {
		_, err := scanTar(ctx, name, readable[i], true, func(h *tar.Header, body []byte, refused error) error {
			at := pos
			pos++
			if _, capture := h.PAXRecords[PAXCaptureOf]; capture {
				return nil // a copy of the page before it, not a page
			}
			k, ok := h.PAXRecords[PAXKey]
			if !ok || !latest.Wins(k, at) {
				w.Skipped++
				return nil
			}
			if reason, ok := storekit.Refusal(refused); ok {
				w.Refuse(k, reason)
				return nil
			}
			w.Pages++
			return fn(entryPage(h, body))
		})
		if err != nil && !errors.Is(err, saver.ErrDamaged) {
			return w, err
		}
	}
	if len(damaged) > 0 {
		return w, errors.Join(damaged...)
	}
	return w, nil
}

// IsArchive reports whether name has an archive extension the tar saver
// writes.
func IsArchive(name string) bool {
	_, err := compressionOf(name)
	return err == nil
}

// tarFiles lists the archives at path; in a directory, an archive that
// is no regular file (a symlink, a FIFO) is refused, not read.
func tarFiles(path string, w *saver.Walked) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("tar: %w", err)
	}
	const want = ".tar, .tar.gz, .tgz, .tar.bz2, .tbz2, .tar.zst or .tzst"
	if !st.IsDir() {
		if !IsArchive(path) {
			return nil, fmt.Errorf("tar: %s is not a %s archive: %w", path, want, saver.ErrNotStore)
		}
		return []string{path}, nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("tar: %w", err)
	}
	var files []string
	for _, e := range ents {
		switch {
		case !IsArchive(e.Name()):
		case e.Type().IsRegular():
			files = append(files, filepath.Join(path, e.Name()))
		default:
			w.Refuse(e.Name(), "no regular file (a symlink, a FIFO), not read")
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("tar: %s holds no %s archive: %w", path, want, saver.ErrNotStore)
	}
	sort.Strings(files)
	return files, nil
}

// scanTar calls fn with each regular entry of the archive (with its body
// when withBody), the first limit entries when limit >= 0, and returns how
// many entries it read whole. An entry over saver.MaxWalkBody is passed
// without its body, with the refusal (the stream is read past it in
// small pieces).
func scanTar(ctx context.Context, name string, limit int, withBody bool, fn func(*tar.Header, []byte, error) error) (int, error) {
	f, err := storekit.OpenRegular(name)
	if err != nil {
		return 0, fmt.Errorf("tar: %w", err)
	}
	defer f.Close()
	n := 0
	damaged := func(err error) (int, error) {
		return n, fmt.Errorf("tar: %s: entry %d is incomplete or corrupt: %v; read the %d entries before it: %w",
			name, n+1, err, n, saver.ErrDamaged)
	}
	comp, _ := compressionOf(name)
	br := bufio.NewReaderSize(f, 64<<10)
	var src io.Reader = br
	switch comp.name {
	case "gzip":
		zr, err := gzip.NewReader(br)
		if err == io.EOF {
			return 0, nil
		}
		if err != nil {
			return damaged(err)
		}
		defer zr.Close()
		src = zr
	case "bzip2":
		src = bzip2.NewReader(br)
	case "zstd":
		zd, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20))
		if err != nil {
			return damaged(err)
		}
		defer zd.Close()
		src = zd
	}
	tr := tar.NewReader(src)
	for limit < 0 || n < limit {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		h, err := tr.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return damaged(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		var body []byte
		var refused error
		if withBody && h.Size <= saver.MaxWalkBody {
			body, err = storekit.ReadCapped(tr)
			if err == nil && int64(len(body)) != h.Size {
				err = io.ErrUnexpectedEOF
			}
		} else {
			if h.Size > saver.MaxWalkBody {
				refused = storekit.ErrTooLarge(h.Size)
			}
			_, err = io.Copy(io.Discard, tr) // a short entry is io.ErrUnexpectedEOF
		}
		if err != nil {
			return damaged(unexpected(err))
		}
		if err := fn(h, body, refused); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func fetchedOf(h *tar.Header) time.Time {
	t, err := time.Parse(time.RFC3339Nano, h.PAXRecords[PAXFetched])
	if err != nil {
		return h.ModTime
	}
	return t
}

// entryPage is the page an entry holds.
func entryPage(h *tar.Header, body []byte) *saver.Page {
	r := h.PAXRecords
	p := &saver.Page{Key: r[PAXKey], URL: r[PAXURL], ContentType: r[PAXContentType], FetchedAt: fetchedOf(h),
		Body: body, Header: http.Header{}, Labels: saver.SplitLabels(r[PAXLabels])}
	p.Status, _ = strconv.Atoi(r[PAXStatus])
	p.Visit, _ = strconv.Atoi(r[PAXVisit])
	if p.ContentType != "" {
		p.Header.Set("Content-Type", p.ContentType)
	}
	for _, name := range saver.MetaHeaders {
		if v := r[PAXHeaderPrefix+strings.ToLower(name)]; v != "" {
			p.Header.Set(name, v)
		}
	}
	return p
}
