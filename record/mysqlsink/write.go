package mysqlsink

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
	"github.com/go-sql-driver/mysql"
)

// Bounds of one statement: MySQL takes at most 65,535 placeholders, and a
// statement's packet must fit max_allowed_packet (16 MiB by default in
// MariaDB).
const (
	maxKeys        = 500     // keys in one IN list
	maxMarks       = 60000   // placeholders of one INSERT
	maxInsertBytes = 4 << 20 // text of the values of one INSERT, roughly
)

// ruleSQL holds one rule's statements.
type ruleSQL struct {
	table, versions string         // quoted
	fields          []record.Field // the schema's, in insert order
	insert          string         // INSERT INTO t (cols) VALUES, rows to follow
	row             string         // "(?, ?, ...)" of one row
	all             string         // every column of the table but version, "t."-prefixed
	allBare         string
}

func statements(sc record.Schema, stored []record.Field) *ruleSQL {
	r := &ruleSQL{table: quote(sc.Rule), versions: quote(recordcodec.VersionsTable(sc.Rule)), fields: sc.Fields}
	var cols, all []string
	for _, c := range reserved {
		cols = append(cols, quote(c[0]))
		all = append(all, quote(c[0]))
	}
	for _, f := range sc.Fields {
		cols = append(cols, quote(f.Name))
	}
	for _, f := range stored {
		all = append(all, quote(f.Name))
	}
	r.insert = fmt.Sprintf(`INSERT INTO %s (%s) VALUES `, r.table, strings.Join(cols, ", "))
	r.row = "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	r.allBare = strings.Join(all, ", ")
	r.all = "t." + strings.Join(all, ", t.")
	return r
}

// keyHash is the key_sha256 of key.
func keyHash(key string) []byte { h := sha256.Sum256([]byte(key)); return h[:] }

func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

// write stores sets in one transaction, again up to twice when the server
// picks it as a deadlock's victim (two workers replacing neighbouring
// keys).
// A table dropped while the crawl runs (ER_NO_SUCH_TABLE) is made again by
// a migration and the transaction run once more, so no record is lost.
func (s *Sink) write(ctx context.Context, sets []record.Set) error {
	var err error
	remade := false
	for try := 0; try < 3; try++ {
		err = s.writeTx(ctx, sets)
		var me *mysql.MySQLError
		if !remade && errors.As(err, &me) && me.Number == 1146 {
			remade = true
			slog.Warn("mysqlsink: a table of the records is gone; making it again", "err", err)
			if _, merr := migrate(ctx, s.db, s.opt.Schemas); merr != nil {
				return fmt.Errorf("%w; making it again: %w", err, merr)
			}
			continue
		}
		if !retryable(err) {
			return err
		}
	}
	return err
}

func retryable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205)
}

// writeTx writes sets in one transaction. A (rule, key) may come more
// than once: the Sets are written in rounds where each comes once, in
// order, so that each replaces the one before (and makes it a version).
func (s *Sink) writeTx(ctx context.Context, sets []record.Set) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for len(sets) > 0 {
		seen := map[[2]string]bool{}
		var round, rest []record.Set
		for _, set := range sets {
			k := [2]string{set.Rule, set.Key}
			if seen[k] {
				rest = append(rest, set)
				continue
			}
			seen[k] = true
			round = append(round, set)
		}
		if err := s.writeRound(ctx, tx, round); err != nil {
			return err
		}
		sets = rest
	}
	return tx.Commit()
}

func (s *Sink) writeRound(ctx context.Context, tx *sql.Tx, sets []record.Set) error {
	byRule := map[string][]record.Set{}
	var order []string
	for _, set := range sets {
		if byRule[set.Rule] == nil {
			order = append(order, set.Rule)
		}
		byRule[set.Rule] = append(byRule[set.Rule], set)
	}
	for _, rule := range order {
		r, sets := s.rules[rule], byRule[rule]
		for i := 0; i < len(sets); i += maxKeys {
			chunk := sets[i:min(i+maxKeys, len(sets))]
			if err := s.replace(ctx, tx, r, chunk); err != nil {
				return fmt.Errorf("rule %s: %w", rule, err)
			}
		}
	}
	return nil
}

// replace moves the current rows of the keys of sets to versions (when
// kept), deletes them, and inserts the rows of sets.
func (s *Sink) replace(ctx context.Context, tx *sql.Tx, r *ruleSQL, sets []record.Set) error {
	if err := s.markChanges(ctx, tx, sets); err != nil {
		return err
	}
	args := []any{s.opt.Crawl}
	for _, set := range sets {
		args = append(args, keyHash(set.Key))
	}
	in := `crawl = ? AND key_sha256 IN (` + marks(len(sets)) + `)`
	if s.opt.KeepVersions > 0 {
		move := fmt.Sprintf(`INSERT INTO %s (version, %s)
SELECT COALESCE((SELECT MAX(v.version) FROM %s v WHERE v.crawl = t.crawl AND v.key_sha256 = t.key_sha256), 0) + 1, %s
FROM %s t WHERE t.%s`, r.versions, r.allBare, r.versions, r.all, r.table, strings.Replace(in, "key_sha256", "t.key_sha256", 1))
		if _, err := tx.ExecContext(ctx, move, args...); err != nil {
			return fmt.Errorf("versions: %w", err)
		}
		if err := s.prune(ctx, tx, r, in, args); err != nil {
			return fmt.Errorf("versions: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+r.table+` WHERE `+in, args...); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	return s.insert(ctx, tx, r, sets)
}

// prune deletes the versions of the keys beyond the last KeepVersions.
func (s *Sink) prune(ctx context.Context, tx *sql.Tx, r *ruleSQL, in string, args []any) error {
	rows, err := tx.QueryContext(ctx, `SELECT key_sha256, MAX(version) FROM `+r.versions+` WHERE `+in+` GROUP BY key_sha256`, args...)
	if err != nil {
		return err
	}
	var conds []string
	del := []any{s.opt.Crawl}
	for rows.Next() {
		var h []byte
		var last int64
		if err := rows.Scan(&h, &last); err != nil {
			rows.Close()
			return err
		}
		if last > int64(s.opt.KeepVersions) {
			conds = append(conds, `(key_sha256 = ? AND version <= ?)`)
			del = append(del, h, last-int64(s.opt.KeepVersions))
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(conds) == 0 {
		return err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM `+r.versions+` WHERE crawl = ? AND (`+strings.Join(conds, " OR ")+`)`, del...)
	return err
}

// insert inserts the rows of sets, as many in one statement as its
// bounds allow.
func (s *Sink) insert(ctx context.Context, tx *sql.Tx, r *ruleSQL, sets []record.Set) error {
	perRow := strings.Count(r.row, "?")
	var args []any
	n, size := 0, 0
	send := func() error {
		if n == 0 {
			return nil
		}
		q := r.insert + strings.TrimSuffix(strings.Repeat(r.row+", ", n), ", ")
		_, err := tx.ExecContext(ctx, q, args...)
		args, n, size = args[:0], 0, 0
		return err
	}
	for _, set := range sets {
		h := keyHash(set.Key)
		for _, rec := range set.Records {
			row, bytes, err := s.row(r, h, rec)
			if err != nil {
				return err
			}
			if n > 0 && ((n+1)*perRow > maxMarks || size+bytes > maxInsertBytes) {
				if err := send(); err != nil {
					return fmt.Errorf("insert: %w", err)
				}
			}
			args = append(args, row...)
			n, size = n+1, size+bytes
		}
	}
	if err := send(); err != nil {
		return fmt.Errorf("insert: %w", err)
	}
	return nil
}

// row is rec's values in r's insert order, and roughly their size: times
// to the microsecond in UTC, labels and lists as JSON arrays.
func (s *Sink) row(r *ruleSQL, hash []byte, rec record.Record) ([]any, int, error) {
	labels := rec.Labels
	if labels == nil {
		labels = []string{}
	}
	lb, err := json.Marshal(labels)
	if err != nil {
		return nil, 0, err
	}
	row := make([]any, 0, len(reserved)+len(r.fields))
	row = append(row, s.opt.Crawl, rec.Key, hash, rec.URL, rec.Rule, int32(rec.Index), micro(rec.FetchedAt),
		string(rec.Status), rec.Problem, string(lb), int32(rec.Visit), nullText(string(rec.Change)), nullText(record.FormatChanged(rec.Changed)))
	size := 64 + len(rec.Key) + len(rec.URL) + len(rec.Problem) + len(lb)
	for _, f := range r.fields {
		v, ok := rec.Fields[f.Name]
		switch {
		case !ok:
			row = append(row, nil)
		case f.All:
			if f.Type == record.Time {
				list := make([]any, len(v.([]any)))
				for i, e := range v.([]any) {
					list[i] = micro(e.(time.Time))
				}
				v = list
			}
			b, err := recordcodec.MarshalList(f, v)
			if err != nil {
				return nil, 0, err
			}
			row = append(row, string(b))
			size += len(b)
		case f.Type == record.Time:
			row = append(row, micro(v.(time.Time)))
		default:
			if str, ok := v.(string); ok {
				size += len(str)
			}
			row = append(row, v)
		}
		size += 8
	}
	return row, size, nil
}

// markChanges marks the records of sets, each of its own key, against
// the current rows of their keys (record.MarkChanges), read in tx in one
// query: a first visit's are not compared, so a chunk of them reads
// nothing.
func (s *Sink) markChanges(ctx context.Context, tx *sql.Tx, sets []record.Set) error {
	if len(sets) == 0 {
		return nil
	}
	rule := sets[0].Rule
	sc := s.schemas[rule]
	return record.MarkRevisits(sc, sets, func(keys []string) ([]record.Set, error) {
		cur, err := queryRule(ctx, tx, s.opt.Crawl, rule, sc.Fields, keys, false)
		if err != nil {
			return nil, fmt.Errorf("reading the current rows: %w", err)
		}
		return cur, nil
	})
}

// nullText is s, or NULL for "".
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func micro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
