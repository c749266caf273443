package warcsaver

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/nlnwa/gowarc"

	"github.com/distscrape/distscrape/saver/internal/disk"
)

// cdxEntry is what a CDXJ line says of one response or revisit record.
type cdxEntry struct {
	id, uri, date, digest string
	status                int
	mime                  string
	offset, length        int64              // of the record's gzip member in its file
	revisitOf             *gowarc.RevisitRef // set for a revisit record
}

// writeCDXJ writes f's index, name.cdxj, sorted by SURT key and time as
// pywb and OutbackCDX expect; temporary file, fsync, rename.
func writeCDXJ(dir, tmpDir string, f *warcFile) error {
	lines := make([]string, 0, len(f.cdx))
	for _, e := range f.cdx {
		lines = append(lines, e.line(f.name))
	}
	sort.Strings(lines)
	tmp, err := os.CreateTemp(tmpDir, "cdxj-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(strings.Join(lines, ""))
	if err == nil {
		err = tmp.Chmod(0o644) // as the WARC files: CreateTemp makes 0600
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, strings.TrimSuffix(f.name, ".warc.gz")+".cdxj"))
	}
	if err == nil {
		err = disk.FsyncPath(dir)
	}
	return err
}

// line is the entry's CDXJ line: SURT key, 14-digit timestamp, JSON block.
func (e cdxEntry) line(file string) string {
	mime, status := e.mime, strconv.Itoa(e.status)
	if i := strings.IndexByte(mime, ';'); i >= 0 {
		mime = mime[:i]
	}
	if e.revisitOf != nil {
		mime = "warc/revisit"
	}
	// The fields in the order pywb's and warcio's indexers write them.
	block := struct {
		URL      string `json:"url"`
		Mime     string `json:"mime"`
		Status   string `json:"status"`
		Digest   string `json:"digest,omitempty"`
		Length   string `json:"length"`
		Offset   string `json:"offset"`
		Filename string `json:"filename"`
	}{e.uri, strings.TrimSpace(mime), status, strings.TrimPrefix(e.digest, "sha1:"),
		strconv.FormatInt(e.length, 10), strconv.FormatInt(e.offset, 10), file}
	js, _ := json.Marshal(block)
	ts := strings.NewReplacer("-", "", "T", "", ":", "").Replace(e.date)
	if len(ts) > 14 {
		ts = ts[:14]
	}
	return surt(e.uri) + " " + ts + " " + string(js) + "\n"
}

// surt is the Sort-friendly URI Reordering Transform of an http(s) URL as
// CDX indexes key it: host labels reversed and comma-joined, "www"
// dropped, default ports dropped, lower case, then ")" and the path and
// query (query parameters sorted).
func surt(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return strings.ToLower(raw)
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	labels := strings.Split(host, ".")
	if len(labels) > 2 && labels[0] == "www" {
		labels = labels[1:]
	}
	for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
		labels[i], labels[j] = labels[j], labels[i]
	}
	key := strings.Join(labels, ",")
	if p := u.Port(); p != "" && !(u.Scheme == "http" && p == "80") && !(u.Scheme == "https" && p == "443") {
		key += ":" + p
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	key += ")" + path
	if u.RawQuery != "" {
		params := strings.Split(u.RawQuery, "&")
		sort.Strings(params)
		key += "?" + strings.Join(params, "&")
	}
	return strings.ToLower(key)
}
