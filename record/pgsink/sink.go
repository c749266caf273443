// Package pgsink is the PostgreSQL record sink (github.com/jackc/pgx/v5),
// for a fleet of workers writing to one database.
//
// The tables are those of record/sqlitesink in PostgreSQL types (text,
// bigint, double precision, boolean, timestamptz to the microsecond, jsonb
// for lists, text[] for labels): one per rule, PRIMARY KEY (crawl, key,
// idx), and rule__versions; made and migrated at open in one transaction
// under an advisory lock, so that workers starting at once do not race.
//
// Flush writes every queued Set in one transaction: per rule, the old rows
// of the Sets' keys are moved to versions (KeepVersions > 0) and deleted,
// and the new rows are copied in (COPY). When the server cannot be reached
// Flush returns an error wrapping record.ErrUnavailable and keeps the
// Sets for the next Flush. No error carries the URL's password.
package pgsink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"strings"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/record"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Config is the sink's own settings.
type Config struct {
	// URL is a postgres:// URL or a key=value connection string, with
	// sslmode and any other libpq setting (the config layer expands
	// ${VAR} in it).
	URL string
	// MaxConns bounds the connections of a sink or reader; 0: 4.
	MaxConns int32
}

// Sink writes records to PostgreSQL.
type Sink struct {
	pool    *pgxpool.Pool
	secret  secret
	opt     record.Options
	schemas map[string]record.Schema
	rules   map[string]*ruleSQL
	batch   recordcodec.Batch
}

var (
	_ record.Sink      = (*Sink)(nil)
	_ record.Discarder = (*Sink)(nil)
)

// connect opens a pool on cfg.URL; its errors carry no password.
func connect(ctx context.Context, cfg Config) (*pgxpool.Pool, secret, error) {
	sec := secretOf(cfg.URL)
	pc, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		return nil, sec, sec.wrap(fmt.Errorf("pgsink: the database URL: %w", err))
	}
	sec = sec.with(pc.ConnConfig.Password)
	pc.MaxConns = 4
	if cfg.MaxConns > 0 {
		pc.MaxConns = cfg.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, sec, sec.wrap(fmt.Errorf("pgsink: %w", err))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, sec, sec.wrap(classify(ctx, fmt.Errorf("pgsink: connect to %s: %w", sec.where(pc.ConnConfig.Config), err)))
	}
	return pool, sec, nil
}

// New connects to cfg.URL and makes or migrates the tables of opt.Schemas.
func New(ctx context.Context, cfg Config, opt record.Options) (*Sink, error) {
	if opt.KeepVersions < 0 {
		return nil, fmt.Errorf("pgsink: keep versions %d < 0", opt.KeepVersions)
	}
	schemas, err := opt.SchemaMap()
	if err != nil {
		return nil, fmt.Errorf("pgsink: %w", err)
	}
	pool, sec, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	stored, err := migrate(ctx, pool, opt.Schemas)
	if err != nil {
		pool.Close()
		return nil, sec.wrap(classify(ctx, fmt.Errorf("pgsink: tables: %w", err)))
	}
	s := &Sink{pool: pool, secret: sec, opt: opt, schemas: schemas, rules: map[string]*ruleSQL{}}
	for _, sc := range opt.Schemas {
		s.rules[sc.Rule] = statements(sc, stored[sc.Rule])
	}
	s.batch = recordcodec.Batch{Name: "pgsink", Crawl: opt.Crawl, Schemas: schemas, Write: s.write,
		Wrap: func(ctx context.Context, err error) error { return sec.wrap(classify(ctx, err)) }}
	return s, nil
}

// Discard drops the queued Sets of keys (record.Discarder).
func (s *Sink) Discard(keys []string) { s.batch.Discard(keys) }

// Put checks set whole and queues it.
func (s *Sink) Put(ctx context.Context, set record.Set) error { return s.batch.Put(ctx, set) }

// Flush writes every queued Set in one transaction. On an error the Sets
// stay queued; record.ErrUnavailable says the server could not be reached.
func (s *Sink) Flush(ctx context.Context) error { return s.batch.Flush(ctx) }

// Close flushes and closes the connections; a second Close does nothing.
// Sets a failed Flush kept are lost with the sink: Close's error says so.
func (s *Sink) Close(ctx context.Context) error {
	open, err := s.batch.Close(ctx)
	if open {
		s.pool.Close()
	}
	return err
}

// classify wraps record.ErrUnavailable around err when the server did not
// answer it (no connection, a connection lost, a server shutting down or
// starting): what a later Flush may get through.
func classify(ctx context.Context, err error) error {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", pe.Code == "53300":
			return fmt.Errorf("%w: %w", record.ErrUnavailable, err)
		}
		return err
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		pgconn.SafeToRetry(err) || strings.Contains(err.Error(), "conn closed") {
		return fmt.Errorf("%w: %w", record.ErrUnavailable, err)
	}
	return err
}

// secret is what an error must not show: a connection string's password,
// as written and as escaped in a URL.
type secret struct{ words []string }

var dsnPassword = regexp.MustCompile(`(?i)password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)`)

func secretOf(conn string) secret {
	var s secret
	if u, err := url.Parse(conn); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			s = s.with(p)
		}
	}
	if i := strings.Index(conn, "://"); i >= 0 {
		// A URL too broken to parse: what lies between ':' and '@'.
		rest := conn[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if c := strings.Index(rest[:at], ":"); c >= 0 {
				s = s.with(rest[c+1 : at])
			}
		}
	}
	for _, m := range dsnPassword.FindAllStringSubmatch(conn, -1) {
		s = s.with(strings.Trim(m[1], "'"))
	}
	return s
}

func (s secret) with(p string) secret {
	if p == "" {
		return s
	}
	for _, w := range []string{p, url.QueryEscape(p), url.PathEscape(p), url.UserPassword("", p).String()[1:]} {
		if w != "" {
			s.words = append(s.words, w)
		}
	}
	return s
}

// wrap returns err with every form of the password replaced by xxxxx in
// its text; errors.Is and errors.As still see through it.
func (s secret) wrap(err error) error {
	if err == nil || len(s.words) == 0 {
		return err
	}
	msg := err.Error()
	for _, w := range s.words {
		msg = strings.ReplaceAll(msg, w, "xxxxx")
	}
	return &redacted{msg: msg, err: err}
}

type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }

// where names a server without its password: user@host:port/database.
func (s secret) where(c pgconn.Config) string {
	return fmt.Sprintf("%s@%s/%s", c.User, net.JoinHostPort(c.Host, fmt.Sprint(c.Port)), c.Database)
}
