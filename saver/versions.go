package saver

import (
	"strings"
	"time"
)

// DefaultKeepVersions is how many versions of a page the file, S3 and Redis
// savers keep when their KeepVersions is 0: the newest and two earlier
// ones, enough to see what a revisit changed while a page revisited every
// hour costs at most three copies, not one per visit.
const DefaultKeepVersions = 3

// MaxKeepVersions bounds KeepVersions: pruning lists a page's versions.
const MaxKeepVersions = 1000

// VersionStamp is a fetch time as the name of an earlier version (file and
// S3 savers): UTC, fixed width, nanoseconds, so names sort by time.
func VersionStamp(t time.Time) string { return t.UTC().Format("20060102T150405.000000000Z") }

// JoinLabels is how labels are written where one string holds them (tar
// PAX record, WARC header, S3 metadata, Redis field): joined by ",", with
// "%" and "," of a label escaped as %25 and %2C. SplitLabels reverses it.
func JoinLabels(labels []string) string {
	esc := make([]string, len(labels))
	for i, l := range labels {
		esc[i] = strings.NewReplacer("%", "%25", ",", "%2C").Replace(l)
	}
	return strings.Join(esc, ",")
}

// SplitLabels reads what JoinLabels wrote; "" is no labels.
func SplitLabels(s string) []string {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = strings.NewReplacer("%2C", ",", "%25", "%").Replace(p)
	}
	return parts
}
