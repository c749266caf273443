package tarsaver

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/bzip2"
	"encoding/binary"
	"errors"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// blockSize is a tar block; entries and the end-of-archive marker (two
// zero blocks) are whole blocks.
const blockSize = 512

// soundPrefix returns the length of the longest prefix of the archive in
// f (size bytes) that readers take whole: whole entries for a plain tar;
// whole members (gzip member, bzip2 stream, zstd frame) for a compressed
// one, each holding whole entries, as the saver writes them (a Flush ends a
// member on an entry boundary). ended says the prefix ends with the
// end-of-archive blocks. err is only a failure to read f: damage is not an
// error, it ends the prefix.
func soundPrefix(f io.ReaderAt, size int64, comp compression) (good int64, ended bool, err error) {
	wf := &watchedFile{f: f}
	switch comp.name {
	case "":
		good, ended = plainPrefix(wf, size)
	case "gzip":
		good, ended = gzipPrefix(wf, size)
	case "zstd":
		good, ended = zstdPrefix(wf, size)
	case "bzip2":
		good, ended = bzip2Prefix(wf, size)
	}
	return good, ended, wf.err
}

// watchedFile keeps the first read error that is not the end of the file,
// so that an I/O error is never taken for damage (and cut).
type watchedFile struct {
	f   io.ReaderAt
	err error
}

func (w *watchedFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := w.f.ReadAt(p, off)
	if err != nil && err != io.EOF && w.err == nil {
		w.err = err
	}
	return n, err
}

// counter counts the bytes read through it.
type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func roundUp(n int64) int64 { return (n + blockSize - 1) / blockSize * blockSize }

// plainPrefix walks a plain tar entry by entry.
func plainPrefix(f io.ReaderAt, size int64) (good int64, ended bool) {
	c := &counter{r: io.NewSectionReader(f, 0, size)}
	tr := tar.NewReader(c)
	for {
		_, err := tr.Next()
		if err == io.EOF {
			// The end blocks count only when nothing follows them.
			if c.n-good >= 2*blockSize && size == good+2*blockSize {
				return size, true
			}
			return good, false
		}
		if err != nil {
			return good, false
		}
		if _, err := io.Copy(io.Discard, tr); err != nil {
			return good, false
		}
		end := roundUp(c.n)
		if end > size { // the padding of the last entry is missing
			return good, false
		}
		good = end
	}
}

// tarMember reads the tar entries of one decompressed member to its end:
// nil when it holds whole entries only, possibly followed by the
// end-of-archive blocks (ended).
func tarMember(r io.Reader) (ended bool, err error) {
	c := &counter{r: r}
	tr := tar.NewReader(c)
	var end int64
	for {
		_, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, err
		}
		if _, err := io.Copy(io.Discard, tr); err != nil {
			return false, err
		}
		end = roundUp(c.n)
	}
	ended = c.n-end >= 2*blockSize
	// Read the member to its end: the decompressor checks its checksum there.
	if _, err := io.Copy(io.Discard, c); err != nil {
		return false, err
	}
	return ended, nil
}

// gzipPrefix walks the gzip members one by one; the reader, given a
// bufio.Reader, reads no byte past a member's trailer but what it buffers.
func gzipPrefix(f io.ReaderAt, size int64) (good int64, ended bool) {
	var zr gzip.Reader
	br := bufio.NewReaderSize(nil, 64<<10)
	for good < size && !ended {
		c := &counter{r: io.NewSectionReader(f, good, size-good)}
		br.Reset(c)
		if err := zr.Reset(br); err != nil {
			return good, false
		}
		zr.Multistream(false)
		e, err := tarMember(&zr)
		if err != nil {
			return good, false
		}
		good += c.n - int64(br.Buffered())
		ended = e
	}
	return good, ended
}

// zstdPrefix walks the zstd frames one by one (skippable frames included).
func zstdPrefix(f io.ReaderAt, size int64) (good int64, ended bool) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20))
	if err != nil {
		return 0, false
	}
	defer dec.Close()
	for good < size && !ended {
		end, skippable, ok := zstdFrameEnd(f, good, size)
		if !ok {
			return good, false
		}
		if !skippable {
			if err := dec.Reset(io.NewSectionReader(f, good, end-good)); err != nil {
				return good, false
			}
			e, err := tarMember(dec)
			if err != nil {
				return good, false
			}
			ended = e
		}
		good = end
	}
	return good, ended
}

// zstdFrameEnd reads the structure of the zstd frame at off (RFC 8878:
// header, block headers, checksum) and returns where it ends; ok is false
// when the frame is not whole within size or is not a frame.
func zstdFrameEnd(f io.ReaderAt, off, size int64) (end int64, skippable, ok bool) {
	var h [18]byte // magic, descriptor, window, dictionary ID (4), content size (8)
	n, _ := f.ReadAt(h[:min(int64(len(h)), size-off)], off)
	if n < 5 {
		return 0, false, false
	}
	magic := binary.LittleEndian.Uint32(h[:4])
	if magic&0xFFFFFFF0 == 0x184D2A50 {
		if n < 8 {
			return 0, false, false
		}
		end = off + 8 + int64(binary.LittleEndian.Uint32(h[4:8]))
		return end, true, end <= size
	}
	fhd := h[4]
	if magic != 0xFD2FB528 || fhd&0x08 != 0 {
		return 0, false, false
	}
	single := fhd&0x20 != 0
	pos := 5 + [4]int{0, 1, 2, 4}[fhd&3]
	if !single {
		pos++
	}
	fcs := [4]int{0, 2, 4, 8}[fhd>>6]
	if fcs == 0 && single {
		fcs = 1
	}
	if pos += fcs; pos > n {
		return 0, false, false
	}
	at := off + int64(pos)
	var b [3]byte
	for {
		if at+3 > size {
			return 0, false, false
		}
		if _, err := f.ReadAt(b[:], at); err != nil {
			return 0, false, false
		}
		bh := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
		bsize := int64(bh >> 3)
		switch (bh >> 1) & 3 {
		case 1: // RLE: one byte repeated
			bsize = 1
		case 3:
			return 0, false, false
		}
		at += 3 + bsize
		if bh&1 == 1 {
			break
		}
	}
	if fhd&0x04 != 0 {
		at += 4
	}
	return at, false, at <= size
}

// bzip2Prefix walks the bzip2 streams one by one. A stream's end is not
// byte-addressed in its header, so streams are found by their start:
// "BZh", the level, and the 48-bit magic of a block or of the stream end,
// byte-aligned (a stream ends padded to a byte), or a prefix of those at
// the file's end (a torn start). A stream that does not decode up to the
// next start is tried up to the one after (compressed data that mimics a
// start, about 2^-76 a position, or a stream's last bytes taken for a
// torn start).
func bzip2Prefix(f io.ReaderAt, size int64) (good int64, ended bool) {
	starts := bzip2Starts(f, size)
	if len(starts) == 0 || starts[0] != 0 {
		return 0, false
	}
	ends := append(starts[1:len(starts):len(starts)], size)
	for i := 0; i < len(starts) && !ended; {
		next := -1
		for j := i; j < len(ends) && j < i+3 && next < 0; j++ {
			e, err := tarMember(bzip2.NewReader(io.NewSectionReader(f, starts[i], ends[j]-starts[i])))
			if err == nil {
				good, ended, next = ends[j], e, j+1
			}
		}
		if next < 0 {
			break
		}
		i = next
	}
	return good, ended
}

var (
	bzBlockMagic = []byte{0x31, 0x41, 0x59, 0x26, 0x53, 0x59}
	bzEndMagic   = []byte{0x17, 0x72, 0x45, 0x38, 0x50, 0x90}
)

// bzip2Starts returns the offsets where a bzip2 stream may start.
func bzip2Starts(f io.ReaderAt, size int64) []int64 {
	const chunk, overlap = 1 << 20, 9
	var starts []int64
	buf := make([]byte, chunk+overlap)
	for off := int64(0); off < size; off += chunk {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if err != nil && !errors.Is(err, io.EOF) {
			return starts
		}
		b := buf[:n]
		for i := 0; ; {
			j := bytes.Index(b[i:], []byte("BZh"))
			if j < 0 {
				break
			}
			i += j
			if i >= chunk { // the next chunk sees it whole
				break
			}
			if i+10 <= len(b) && b[i+3] >= '1' && b[i+3] <= '9' &&
				(bytes.Equal(b[i+4:i+10], bzBlockMagic) || bytes.Equal(b[i+4:i+10], bzEndMagic)) {
				starts = append(starts, off+int64(i))
			}
			i++
		}
	}
	// A start torn within its first 10 bytes.
	for p := max(0, size-9); p < size; p++ {
		var b [9]byte
		n, _ := f.ReadAt(b[:size-p], p)
		if n == int(size-p) && bzip2StartPrefix(b[:n]) && (len(starts) == 0 || starts[len(starts)-1] < p) {
			starts = append(starts, p)
		}
	}
	return starts
}

// bzip2StartPrefix says whether b is a prefix of a stream's first 10 bytes.
func bzip2StartPrefix(b []byte) bool {
	for i, c := range b {
		switch {
		case i < 3 && c != "BZh"[i]:
			return false
		case i == 3 && (c < '1' || c > '9'):
			return false
		case i > 3 && c != bzBlockMagic[i-4] && c != bzEndMagic[i-4]:
			return false
		}
	}
	return true
}
