package redissink

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/distscrape/distscrape/driver"
)

// Every Redis key of the sink is built in this file and nowhere else.
//
// A crawl's keys start with its prefix: records.key with {crawl} replaced
// by the crawl's name in braces ("{crawl}:records" → "{shop}:records").
// The braces are Redis Cluster's hash tag: every key of a crawl is in one
// slot, as the Flush script, which writes many of them at once, needs.
//
//	PREFIX:schema          hash    "RULE" → "" for every rule stored, and
//	                               "RULE.FIELD" → the field's type as the SQL
//	                               sinks name it ("int", "list of time"): how
//	                               values read back. Written at open (HSETNX)
//	                               and again by every Flush; a field whose
//	                               type changed is refused at open.
//	PREFIX:cur:RULE        hash    item key → its current Set (JSON, codec.go);
//	                               the rule's "table": DEL it to drop its
//	                               records (and its counts go with it).
//	PREFIX:ver:RULE:KEY    list    the Sets of KEY that a Put replaced, oldest
//	                               first, at most Options.KeepVersions
//	                               (RPUSH, LTRIM).
//	PREFIX:count:RULE      hash    the current records of the rule:
//	                               records, invalid, changed, and field:NAME
//	                               for those with a value of NAME; each Flush
//	                               adds its differences (HINCRBY), so that
//	                               record.Counter reads a hash per rule.
//
// Rule and field names are [a-z0-9_] (record.ValidName): no ':' nor '.',
// so a key's parts never run into one another; the item key comes last.
type keys struct {
	prefix string // PREFIX, without the ':' that follows it
}

// DefaultKey is records.key's default.
const DefaultKey = "{crawl}:records"

// crawlVar stands for the crawl's hash tag in records.key.
const crawlVar = "{crawl}"

// The suffixes after PREFIX, each spelled here only.
const (
	sfxSchema   = ":schema"
	sfxCurrent  = ":cur:"
	sfxVersions = ":ver:"
	sfxCounts   = ":count:"
)

// The fields of a PREFIX:count:RULE hash.
const (
	countRecords = "records"
	countInvalid = "invalid"
	countChanged = "changed"
	countField   = "field:" // + the field's name
)

// errKey: records.key cannot name a crawl's keys.
var errKey = errors.New("redissink: records.key")

// keyProblem says what is wrong with a records.key template, "" when
// nothing: it must hold {crawl} once (crawls apart, and one hash slot per
// crawl) and no other brace (another "{...}" before it would be the hash
// tag), and no white space or control character (a key that redis-cli
// would need quoted).
func keyProblem(tmpl string) string {
	switch {
	case tmpl == "":
		return "empty (the default is " + DefaultKey + ")"
	case strings.IndexFunc(tmpl, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return driver.Quote(tmpl) + " holds white space or a control character"
	case strings.Count(tmpl, crawlVar) != 1:
		return driver.Quote(tmpl) + " must hold {crawl} once: it keeps crawls apart and puts each in one Redis Cluster slot (e.g. " + DefaultKey + ")"
	case strings.ContainsAny(strings.Replace(tmpl, crawlVar, "", 1), "{}"):
		return driver.Quote(tmpl) + " has a brace besides {crawl}: only {crawl} may make the hash tag"
	}
	return ""
}

// checkCrawl refuses a crawl name the hash tag cannot hold.
func checkCrawl(crawl string) error {
	if crawl == "" || strings.ContainsAny(crawl, "{}") || strings.IndexFunc(crawl, unicode.IsSpace) >= 0 {
		return fmt.Errorf("redissink: crawl name %q: want a name without braces or spaces", crawl)
	}
	return nil
}

// newKeys returns crawl's keys under the template tmpl ("" is DefaultKey).
func newKeys(tmpl, crawl string) (keys, error) {
	if tmpl == "" {
		tmpl = DefaultKey
	}
	if msg := keyProblem(tmpl); msg != "" {
		return keys{}, fmt.Errorf("%w: %s", errKey, msg)
	}
	if err := checkCrawl(crawl); err != nil {
		return keys{}, err
	}
	return keys{prefix: strings.Replace(tmpl, crawlVar, "{"+crawl+"}", 1)}, nil
}

func (k keys) schema() string { return k.prefix + sfxSchema }

func (k keys) current(rule string) string { return k.prefix + sfxCurrent + rule }

func (k keys) versions(rule, key string) string { return k.prefix + sfxVersions + rule + ":" + key }

func (k keys) counts(rule string) string { return k.prefix + sfxCounts + rule }

// schemaField is the PREFIX:schema field of a rule's field; the rule's own
// is its name.
func schemaField(rule, field string) string { return rule + "." + field }
