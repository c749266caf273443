// Package sqlitesink is the SQLite record sink (modernc.org/sqlite, pure
// Go): the embedded store for one machine.
//
// Each rule has a table named after it: the reserved columns
// (record.ReservedColumns) then a column per field, PRIMARY KEY (crawl,
// key, idx), so that several crawls may share a database; and a versions
// table, rule__versions, with a version number besides. The tables are made
// and extended from Options.Schemas when the sink opens (a new field adds a
// column; a changed type is refused with record.ErrSchema), and the types
// of the fields recorded in distscrape_fields.
//
// Put queues a Set; Flush writes every queued Set in one transaction
// (the old rows of its crawl and key deleted, moved to versions first when
// KeepVersions > 0, the new ones inserted), in WAL mode with
// synchronous=FULL: durable when Flush returns.
package sqlitesink

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// Config is the sink's own settings.
type Config struct {
	// Path is the database file, made if missing.
	Path string
}

// Sink writes records to a SQLite database.
type Sink struct {
	db      *sql.DB
	opt     record.Options
	schemas map[string]record.Schema
	rules   map[string]*ruleSQL
	batch   recordcodec.Batch
}

// ruleSQL holds one rule's statements.
type ruleSQL struct {
	fields   []record.Field // the schema's, in insert order
	insert   string
	delete   string
	moveNext string // the version number a move makes
	move     string // the rows of (crawl, key) into versions
	prune    string
	// deleteReturning is delete returning idx and the fields of the rows
	// deleted: the change log's read of a revisit.
	deleteReturning string
}

var (
	_ record.Sink      = (*Sink)(nil)
	_ record.Discarder = (*Sink)(nil)
)

func dsn(path string, write bool) (string, error) {
	if path == "" || strings.ContainsAny(path, "?#") {
		return "", fmt.Errorf("sqlitesink: database path %q: empty, or holds '?' or '#'", path)
	}
	d := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
	if write {
		d += "&_txlock=immediate"
	}
	return d, nil
}

// New opens (or makes) the database at cfg.Path and makes or migrates the
// tables of opt.Schemas.
func New(ctx context.Context, cfg Config, opt record.Options) (*Sink, error) {
	if opt.KeepVersions < 0 {
		return nil, fmt.Errorf("sqlitesink: keep versions %d < 0", opt.KeepVersions)
	}
	schemas, err := opt.SchemaMap()
	if err != nil {
		return nil, fmt.Errorf("sqlitesink: %w", err)
	}
	d, err := dsn(cfg.Path, true)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", d)
	if err != nil {
		return nil, fmt.Errorf("sqlitesink: %s: %w", cfg.Path, err)
	}
	db.SetMaxOpenConns(1) // one writer: SQLite writes one transaction at a time anyway
	stored, err := migrate(ctx, db, opt.Schemas)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlitesink: %s: %w", cfg.Path, err)
	}
	s := &Sink{db: db, opt: opt, schemas: schemas, rules: map[string]*ruleSQL{}}
	for _, sc := range opt.Schemas {
		s.rules[sc.Rule] = statements(sc, stored[sc.Rule])
	}
	s.batch = recordcodec.Batch{Name: "sqlitesink", Crawl: opt.Crawl, Schemas: schemas, Write: s.write}
	return s, nil
}

func statements(sc record.Schema, stored []record.Field) *ruleSQL {
	t, v := recordcodec.Quote(sc.Rule), recordcodec.Quote(recordcodec.VersionsTable(sc.Rule))
	var cols, all []string
	for _, c := range reserved {
		cols = append(cols, recordcodec.Quote(c[0]))
	}
	all = append(all, cols...)
	for _, f := range sc.Fields {
		cols = append(cols, recordcodec.Quote(f.Name))
	}
	for _, f := range stored {
		all = append(all, recordcodec.Quote(f.Name))
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")
	return &ruleSQL{
		fields:          sc.Fields,
		insert:          fmt.Sprintf(`INSERT INTO %s (%s) VALUES (%s)`, t, strings.Join(cols, ", "), marks),
		delete:          fmt.Sprintf(`DELETE FROM %s WHERE crawl = ? AND key = ?`, t),
		moveNext:        fmt.Sprintf(`SELECT coalesce(max(version), 0) + 1 FROM %s WHERE crawl = ? AND key = ?`, v),
		move:            fmt.Sprintf(`INSERT INTO %s (version, %s) SELECT ?, %s FROM %s WHERE crawl = ? AND key = ?`, v, strings.Join(all, ", "), strings.Join(all, ", "), t),
		prune:           fmt.Sprintf(`DELETE FROM %s WHERE crawl = ? AND key = ? AND version <= ?`, v),
		deleteReturning: deleteReturning(sc),
	}
}

// Discard drops the queued Sets of keys (record.Discarder).
func (s *Sink) Discard(keys []string) { s.batch.Discard(keys) }

// Put checks set whole and queues it.
func (s *Sink) Put(ctx context.Context, set record.Set) error { return s.batch.Put(ctx, set) }

// Flush writes every queued Set in one transaction.
func (s *Sink) Flush(ctx context.Context) error { return s.batch.Flush(ctx) }

// write stores sets in one transaction; a table dropped while the crawl
// runs ("no such table") is made again by a migration and the transaction
// run once more, so no record is lost to it.
func (s *Sink) write(ctx context.Context, sets []record.Set) error {
	err := s.writeTx(ctx, sets)
	if err == nil || !strings.Contains(err.Error(), "no such table") {
		return err
	}
	slog.Warn("sqlitesink: a table of the records is gone; making it again", "err", err)
	if _, merr := migrate(ctx, s.db, s.opt.Schemas); merr != nil {
		return fmt.Errorf("%w; making it again: %w", err, merr)
	}
	return s.writeTx(ctx, sets)
}

func (s *Sink) writeTx(ctx context.Context, sets []record.Set) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmts := map[string]*sql.Stmt{}
	stmt := func(q string) (*sql.Stmt, error) {
		if st, ok := stmts[q]; ok {
			return st, nil
		}
		st, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return nil, err
		}
		stmts[q] = st
		return st, nil
	}
	args := []any{}
	for _, set := range sets {
		r := s.rules[set.Rule]
		if s.opt.KeepVersions > 0 {
			if err := s.moveToVersions(ctx, tx, stmt, r, set.Key); err != nil {
				return err
			}
		}
		if set, err = s.deleteMarking(ctx, stmt, r, set); err != nil {
			return err
		}
		ins, err := stmt(r.insert)
		if err != nil {
			return err
		}
		for _, rec := range set.Records {
			if args, err = s.row(args[:0], r, rec); err != nil {
				return err
			}
			if _, err := ins.ExecContext(ctx, args...); err != nil {
				return fmt.Errorf("key %q rule %s: %w", set.Key, set.Rule, err)
			}
		}
	}
	return tx.Commit()
}

// deleteMarking deletes the current rows of set's key and marks set's
// records against them (record.MarkChanges): for a revisit the DELETE
// returns the rows it deletes, so the change log costs no statement of
// its own; a first visit's records are not compared.
func (s *Sink) deleteMarking(ctx context.Context, stmt func(string) (*sql.Stmt, error), r *ruleSQL, set record.Set) (record.Set, error) {
	sc := s.schemas[set.Rule]
	if len(set.Records) == 0 || set.Records[0].Visit == 0 {
		del, err := stmt(r.delete)
		if err != nil {
			return set, err
		}
		if _, err := del.ExecContext(ctx, s.opt.Crawl, set.Key); err != nil {
			return set, err
		}
		return record.MarkChanges(sc, nil, false, set), nil
	}
	del, err := stmt(r.deleteReturning)
	if err != nil {
		return set, err
	}
	rows, err := del.QueryContext(ctx, s.opt.Crawl, set.Key)
	if err != nil {
		return set, fmt.Errorf("key %q rule %s: reading the current rows: %w", set.Key, set.Rule, err)
	}
	prev, err := digestRows(rows, sc)
	if err != nil {
		return set, fmt.Errorf("key %q rule %s: reading the current rows: %w", set.Key, set.Rule, err)
	}
	return record.MarkChanges(sc, prev, true, set), nil
}

// deleteReturning deletes the current rows of (crawl, key) and returns
// their idx, visit, change marks and fields: what a revisit's records are
// compared with.
func deleteReturning(sc record.Schema) string {
	cols := []string{"idx", "visit", recordcodec.Quote("change"), recordcodec.Quote("changes")}
	for _, f := range sc.Fields {
		cols = append(cols, recordcodec.Quote(f.Name))
	}
	return fmt.Sprintf(`DELETE FROM %s WHERE crawl = ? AND key = ? RETURNING %s`, recordcodec.Quote(sc.Rule), strings.Join(cols, ", "))
}

// digestRows reads rows of deleteReturning into what the sink held, by
// idx, and closes them.
func digestRows(rows *sql.Rows, sc record.Schema) (map[int]record.Held, error) {
	defer rows.Close()
	const head = 4 // idx, visit, change, changes
	vals := make([]any, head+len(sc.Fields))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out map[int]record.Held
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		var rec record.Record
		if err := recordcodec.ScanFields(&rec, sc.Fields, vals[head:], fieldValue); err != nil {
			return nil, err
		}
		text := func(v any) string {
			switch v := v.(type) {
			case string:
				return v
			case []byte:
				return string(v)
			}
			return ""
		}
		if err := recordcodec.ParseChange(&rec, text(vals[2]), text(vals[3])); err != nil {
			return nil, err
		}
		idx, _ := vals[0].(int64)
		visit, _ := vals[1].(int64)
		rec.Visit = int(visit)
		if out == nil {
			out = map[int]record.Held{}
		}
		out[int(idx)] = record.HeldOf(sc, rec)
	}
	return out, rows.Err()
}

func (s *Sink) moveToVersions(ctx context.Context, tx *sql.Tx, stmt func(string) (*sql.Stmt, error), r *ruleSQL, key string) error {
	next, err := stmt(r.moveNext)
	if err != nil {
		return err
	}
	var version int64
	if err := next.QueryRowContext(ctx, s.opt.Crawl, key).Scan(&version); err != nil {
		return err
	}
	move, err := stmt(r.move)
	if err != nil {
		return err
	}
	res, err := move.ExecContext(ctx, version, s.opt.Crawl, key)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err // nothing replaced: no version
	}
	prune, err := stmt(r.prune)
	if err != nil {
		return err
	}
	_, err = prune.ExecContext(ctx, s.opt.Crawl, key, version-int64(s.opt.KeepVersions))
	return err
}

// row appends the values of rec's columns to args, in r's insert order.
func (s *Sink) row(args []any, r *ruleSQL, rec record.Record) ([]any, error) {
	labels := rec.Labels
	if labels == nil {
		labels = []string{}
	}
	lj, err := json.Marshal(labels)
	if err != nil {
		return nil, err
	}
	args = append(args, s.opt.Crawl, rec.Key, rec.URL, rec.Rule, int64(rec.Index), recordcodec.FormatTime(rec.FetchedAt),
		string(rec.Status), rec.Problem, string(lj), int64(rec.Visit), nullText(string(rec.Change)), nullText(record.FormatChanged(rec.Changed)))
	for _, f := range r.fields {
		v, ok := rec.Fields[f.Name]
		if !ok {
			args = append(args, nil)
			continue
		}
		x, err := sqlValue(f, v)
		if err != nil {
			return nil, err
		}
		args = append(args, x)
	}
	return args, nil
}

// nullText is s, or NULL for "".
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// sqlValue is a field's value as the SQLite column holds it.
func sqlValue(f record.Field, v any) (any, error) {
	if f.All {
		b, err := recordcodec.MarshalList(f, v)
		return string(b), err
	}
	switch v := v.(type) {
	case bool:
		if v {
			return int64(1), nil
		}
		return int64(0), nil
	case string, int64, float64:
		return v, nil
	}
	return recordcodec.JSONValue(f, v), nil // a time: its text
}

// Close flushes the queue and closes the database; a second Close does
// nothing.
func (s *Sink) Close(ctx context.Context) error {
	open, err := s.batch.Close(ctx)
	if !open {
		return nil
	}
	if cerr := s.db.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("sqlitesink: %w", cerr))
	}
	return err
}
