package pgsink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ruleSQL holds one rule's statements; $1 is the crawl, $2 the keys.
type ruleSQL struct {
	table  pgx.Identifier
	fields []record.Field // the schema's, in COPY order
	cols   []string       // the COPY columns
	delete string
	move   string // the rows of the keys into versions, numbered after the last
	prune  string // $3: how many versions to keep
}

func statements(sc record.Schema, stored []record.Field) *ruleSQL {
	t, v := recordcodec.Quote(sc.Rule), recordcodec.Quote(recordcodec.VersionsTable(sc.Rule))
	r := &ruleSQL{table: pgx.Identifier{sc.Rule}, fields: sc.Fields}
	var all []string
	for _, c := range reserved {
		r.cols = append(r.cols, c[0])
		all = append(all, "t."+recordcodec.Quote(c[0]))
	}
	for _, f := range sc.Fields {
		r.cols = append(r.cols, f.Name)
	}
	for _, f := range stored {
		all = append(all, "t."+recordcodec.Quote(f.Name))
	}
	list := strings.Join(all, ", ")
	r.delete = fmt.Sprintf(`DELETE FROM %s WHERE crawl = $1 AND key = ANY($2)`, t)
	r.move = fmt.Sprintf(`INSERT INTO %s (version, %s)
SELECT n.version, %s FROM %s t JOIN (
	SELECT k.key, coalesce((SELECT max(v.version) FROM %s v WHERE v.crawl = $1 AND v.key = k.key), 0) + 1 AS version
	FROM unnest($2::text[]) AS k(key)) n ON t.key = n.key
WHERE t.crawl = $1`, v, strings.ReplaceAll(list, "t.", ""), list, t, v)
	r.prune = fmt.Sprintf(`DELETE FROM %s v USING (
	SELECT key, max(version) AS last FROM %s WHERE crawl = $1 AND key = ANY($2) GROUP BY key) m
WHERE v.crawl = $1 AND v.key = m.key AND v.version <= m.last - $3`, v, v)
	return r
}

// write stores sets in one transaction; a table dropped while the crawl
// runs (undefined_table, 42P01) is made again by a migration and the
// transaction run once more, so no record is lost to it.
func (s *Sink) write(ctx context.Context, sets []record.Set) error {
	err := s.writeTx(ctx, sets)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42P01" {
		return err
	}
	slog.Warn("pgsink: a table of the records is gone; making it again", "err", err)
	if _, merr := migrate(ctx, s.pool, s.opt.Schemas); merr != nil {
		return fmt.Errorf("%w; making it again: %w", err, merr)
	}
	return s.writeTx(ctx, sets)
}

// writeTx stores sets in one transaction. A (rule, key) may come more than
// once: the Sets are written in rounds where each comes once, in order, so
// that each replaces the one before (and makes it a version).
func (s *Sink) writeTx(ctx context.Context, sets []record.Set) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
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
	return tx.Commit(ctx)
}

func (s *Sink) writeRound(ctx context.Context, tx pgx.Tx, sets []record.Set) error {
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
		if err := s.markChanges(ctx, tx, rule, sets); err != nil {
			return err
		}
		keys := make([]string, len(sets))
		n := 0
		for i, set := range sets {
			keys[i] = set.Key
			n += len(set.Records)
		}
		b := &pgx.Batch{}
		if s.opt.KeepVersions > 0 {
			b.Queue(r.move, s.opt.Crawl, keys)
			b.Queue(r.prune, s.opt.Crawl, keys, s.opt.KeepVersions)
		}
		b.Queue(r.delete, s.opt.Crawl, keys)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("rule %s: %w", rule, err)
		}
		if n == 0 {
			continue
		}
		rows := make([][]any, 0, n)
		for _, set := range sets {
			for _, rec := range set.Records {
				row, err := s.row(r, rec)
				if err != nil {
					return err
				}
				rows = append(rows, row)
			}
		}
		if _, err := tx.CopyFrom(ctx, r.table, r.cols, pgx.CopyFromRows(rows)); err != nil {
			return fmt.Errorf("rule %s: copy: %w", rule, err)
		}
	}
	return nil
}

// row is rec's values in r's COPY order; times to the microsecond,
// PostgreSQL's step, lists as jsonb.
func (s *Sink) row(r *ruleSQL, rec record.Record) ([]any, error) {
	labels := rec.Labels
	if labels == nil {
		labels = []string{}
	}
	row := make([]any, 0, len(r.cols))
	row = append(row, s.opt.Crawl, rec.Key, rec.URL, rec.Rule, int32(rec.Index), micro(rec.FetchedAt),
		string(rec.Status), rec.Problem, labels, int32(rec.Visit), nullText(string(rec.Change)), nullText(record.FormatChanged(rec.Changed)))
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
				return nil, err
			}
			row = append(row, json.RawMessage(b))
		case f.Type == record.Time:
			row = append(row, micro(v.(time.Time)))
		default:
			row = append(row, v)
		}
	}
	return row, nil
}

// markChanges marks the records of sets, each of its own key, against
// the current rows of their keys (record.MarkChanges), read in tx in one
// query: a first visit's are not compared, so a round of them reads
// nothing.
func (s *Sink) markChanges(ctx context.Context, tx pgx.Tx, rule string, sets []record.Set) error {
	sc := s.schemas[rule]
	return record.MarkRevisits(sc, sets, func(keys []string) ([]record.Set, error) {
		cur, err := queryRule(ctx, tx, s.opt.Crawl, rule, sc.Fields, keys, false)
		if err != nil {
			return nil, fmt.Errorf("rule %s: reading the current rows: %w", rule, err)
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
