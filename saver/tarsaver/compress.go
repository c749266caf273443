package tarsaver

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dsnet/compress/bzip2"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/distscrape/distscrape/saver/internal/storekit"
)

// compression is an archive's compression, chosen by its file extension.
type compression struct {
	name string // "", "gzip", "bzip2", "zstd"
	ext  string // the extension matched, e.g. ".tar.gz"
}

var compressions = []compression{
	{"gzip", ".tar.gz"}, {"gzip", ".tgz"},
	{"bzip2", ".tar.bz2"}, {"bzip2", ".tbz2"},
	{"zstd", ".tar.zst"}, {"zstd", ".tzst"},
	{"", ".tar"},
}

func compressionOf(path string) (compression, error) {
	lower := strings.ToLower(path)
	for _, c := range compressions {
		if strings.HasSuffix(lower, c.ext) && len(path) > len(c.ext) {
			return c, nil
		}
	}
	return compression{}, storekit.ConfigErr("saver.path", "%q has no archive extension (use .tar, .tar.gz, .tgz, .tar.bz2, .tar.zst)", path)
}

// member compresses one member (gzip member, bzip2 stream, zstd frame) at a
// time. Concatenated members are one valid stream for gzip, bzip2 and zstd,
// so closing a member at each Flush leaves a file every decompressor reads
// to its end.
type member interface {
	io.Writer
	Close() error          // ends the member
	Reset(io.Writer) error // starts a new member on w
}

func newMember(c compression) (member, error) {
	switch c.name {
	case "gzip":
		w, err := gzip.NewWriterLevel(io.Discard, gzip.DefaultCompression)
		if err != nil {
			return nil, err
		}
		return gzipMember{w}, nil
	case "zstd":
		// One goroutine: the worker's cores belong to fetching and scraping.
		w, err := zstd.NewWriter(io.Discard, zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		return zstdMember{w}, nil
	case "bzip2":
		// dsnet/compress is the pure-Go bzip2 writer in common use (the
		// standard library only reads bzip2); it writes streams the system
		// bzip2 reads, multi-stream files included. bzip2 is by far the
		// slowest choice (a few MB/s a core): prefer zstd for large crawls.
		w, err := bzip2.NewWriter(io.Discard, &bzip2.WriterConfig{Level: bzip2.DefaultCompression})
		if err != nil {
			return nil, err
		}
		return w, nil
	}
	return nil, fmt.Errorf("unknown compression %q", c.name)
}

type gzipMember struct{ *gzip.Writer }

func (g gzipMember) Reset(w io.Writer) error { g.Writer.Reset(w); return nil }

type zstdMember struct{ *zstd.Encoder }

func (z zstdMember) Reset(w io.Writer) error { z.Encoder.Reset(w); return nil }

// spoolMem is how much unflushed archive data stays in memory before the
// spool moves to a temporary file.
const spoolMem = 8 << 20

// spool holds what was written since the last Flush: the archive file only
// ever grows by whole flushed members, so a crash leaves no torn entry. It
// spills to an unlinked temporary file (gone with the process) when large.
type spool struct {
	dir  string
	mem  bytes.Buffer
	file *os.File
	size int64
}

func (s *spool) Write(p []byte) (int, error) {
	if s.file == nil && s.mem.Len()+len(p) > spoolMem {
		f, err := os.CreateTemp(s.dir, ".distscrape-spool-*")
		if err != nil {
			return 0, fmt.Errorf("spool: %w", err)
		}
		os.Remove(f.Name()) // the open descriptor keeps it until Close or exit
		if _, err := s.mem.WriteTo(f); err != nil {
			f.Close()
			return 0, fmt.Errorf("spool: %w", err)
		}
		s.file = f
	}
	var n int
	var err error
	if s.file != nil {
		n, err = s.file.Write(p)
	} else {
		n, err = s.mem.Write(p)
	}
	s.size += int64(n)
	return n, err
}

// copyTo writes the spooled bytes to w.
func (s *spool) copyTo(w io.Writer) error {
	if s.file == nil {
		_, err := w.Write(s.mem.Bytes())
		return err
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(w, s.file)
	return err
}

// reset empties the spool for reuse.
func (s *spool) reset() {
	s.mem.Reset()
	if s.mem.Cap() > 4*spoolMem {
		s.mem = bytes.Buffer{}
	}
	if s.file != nil {
		s.file.Close()
		s.file = nil
	}
	s.size = 0
}

func newSpool(path string) *spool { return &spool{dir: filepath.Dir(path)} }
