// Package mysqlsink is the MariaDB and MySQL record sink
// (github.com/go-sql-driver/mysql), for a fleet of workers writing to one
// database.
//
// The tables are those of record/pgsink in InnoDB (utf8mb4, binary
// collation: keys compare byte for byte): one per rule and
// rule__versions, LONGTEXT for text, BIGINT, DOUBLE, BOOLEAN, DATETIME(6)
// in UTC for times (to the microsecond), JSON arrays in LONGTEXT for lists
// and labels. A key may be longer than an index allows, so each table has
// a column key_sha256 (the SHA-256 of key) and its PRIMARY KEY is (crawl,
// key_sha256, idx). Tables are made and migrated at open under a named
// lock (GET_LOCK), so that workers starting at once do not race; MySQL's
// DDL commits at once, so each step is one that a later start can redo.
//
// Flush writes every queued Set in one transaction: per rule, the old rows
// of the Sets' keys are copied to versions (KeepVersions > 0) and deleted,
// and the new rows inserted. When the server cannot be reached Flush
// returns an error wrapping record.ErrUnavailable and keeps the Sets for
// the next Flush. No error carries the URL's password.
//
// Rule and field names that are reserved words of MySQL or MariaDB
// (select, order, key...) are refused (record.ErrSchema): every query a
// user writes would have to quote them.
package mysqlsink

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/distscrape/distscrape/internal/recordcodec"
	"github.com/distscrape/distscrape/internal/redact"
	"github.com/distscrape/distscrape/record"
	"github.com/go-sql-driver/mysql"
)

// Config is the sink's own settings.
type Config struct {
	// URL is mysql://user:password@host:port/database (or mariadb://),
	// with these parameters: tls=true|false|skip-verify|preferred,
	// socket=PATH (a unix socket instead of host:port), timeout=DURATION
	// (to connect; default 10s). The config layer expands ${VAR} in it.
	URL string
	// MaxConns bounds the connections of a sink or reader; 0: 4.
	MaxConns int
}

// MaxCrawlLen is the longest crawl name the tables hold (crawl is a
// VARCHAR in each PRIMARY KEY).
const MaxCrawlLen = 255

// Sink writes records to MariaDB or MySQL.
type Sink struct {
	db      *sql.DB
	secret  secret
	opt     record.Options
	schemas map[string]record.Schema
	rules   map[string]*ruleSQL
	batch   recordcodec.Batch
}

var _ record.Sink = (*Sink)(nil)

// ParseURL reads a records.url into the driver's configuration: UTC times,
// strict SQL mode, utf8mb4 with the binary collation.
func ParseURL(raw string) (*mysql.Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("the database URL: %w", err)
	}
	if u.Scheme != "mysql" && u.Scheme != "mariadb" {
		return nil, fmt.Errorf("the database URL: scheme %q, want mysql:// or mariadb://", u.Scheme)
	}
	c := mysql.NewConfig()
	if u.User != nil {
		c.User = u.User.Username()
		c.Passwd, _ = u.User.Password()
	}
	c.Net, c.Addr = "tcp", u.Host
	if u.Port() == "" && u.Hostname() != "" {
		c.Addr = net.JoinHostPort(u.Hostname(), "3306")
	}
	c.DBName = strings.TrimPrefix(u.Path, "/")
	c.Timeout = 10 * time.Second
	for k, v := range u.Query() {
		val := v[len(v)-1]
		switch k {
		case "tls":
			switch val {
			case "true", "false", "skip-verify", "preferred":
				c.TLSConfig = val
			default:
				return nil, fmt.Errorf("the database URL: tls=%s: want true, false, skip-verify or preferred", val)
			}
		case "socket":
			c.Net, c.Addr = "unix", val
		case "timeout":
			d, err := time.ParseDuration(val)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("the database URL: timeout=%s: want a duration such as 10s", val)
			}
			c.Timeout = d
		default:
			return nil, fmt.Errorf("the database URL: unknown parameter %q (tls, socket and timeout are known)", k)
		}
	}
	if c.DBName == "" || strings.Contains(c.DBName, "/") {
		return nil, fmt.Errorf("the database URL: name one database after the host (mysql://host:3306/db)")
	}
	if c.Net == "tcp" && u.Hostname() == "" {
		return nil, fmt.Errorf("the database URL: no host (or socket= parameter)")
	}
	c.ParseTime, c.Loc = true, time.UTC
	c.Collation = "utf8mb4_bin"
	c.InterpolateParams = false // the binary protocol: floats and times exact
	c.Logger = driverLog{}
	c.Params = map[string]string{"sql_mode": "'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'", "time_zone": "'+00:00'"}
	return c, nil
}

// driverLog sends the driver's messages (a connection found broken) to
// slog rather than to stderr.
type driverLog struct{}

func (driverLog) Print(v ...any) {
	slog.Debug("mysqlsink: driver", "msg", redact.String(fmt.Sprint(v...)))
}

// connect opens a pool on cfg.URL; its errors carry no password.
func connect(ctx context.Context, cfg Config) (*sql.DB, secret, error) {
	sec := secretOf(cfg.URL)
	c, err := ParseURL(cfg.URL)
	if err != nil {
		return nil, sec, sec.wrap(fmt.Errorf("mysqlsink: %w", err))
	}
	sec = sec.with(c.Passwd)
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, sec, sec.wrap(fmt.Errorf("mysqlsink: %w", err))
	}
	db := sql.OpenDB(conn)
	n := 4
	if cfg.MaxConns > 0 {
		n = cfg.MaxConns
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxLifetime(30 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		where := fmt.Sprintf("%s@%s(%s)/%s", c.User, c.Net, c.Addr, c.DBName)
		return nil, sec, sec.wrap(classify(ctx, fmt.Errorf("mysqlsink: connect to %s: %w", where, err)))
	}
	return db, sec, nil
}

// New connects to cfg.URL and makes or migrates the tables of opt.Schemas.
func New(ctx context.Context, cfg Config, opt record.Options) (*Sink, error) {
	if opt.KeepVersions < 0 {
		return nil, fmt.Errorf("mysqlsink: keep versions %d < 0", opt.KeepVersions)
	}
	if len(opt.Crawl) > MaxCrawlLen {
		return nil, fmt.Errorf("mysqlsink: crawl name of %d bytes: at most %d", len(opt.Crawl), MaxCrawlLen)
	}
	schemas, err := opt.SchemaMap()
	if err != nil {
		return nil, fmt.Errorf("mysqlsink: %w", err)
	}
	for _, sc := range opt.Schemas {
		if err := CheckNames(sc); err != nil {
			return nil, fmt.Errorf("mysqlsink: %w", err)
		}
	}
	db, sec, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	stored, err := migrate(ctx, db, opt.Schemas)
	if err != nil {
		db.Close()
		return nil, sec.wrap(classify(ctx, fmt.Errorf("mysqlsink: tables: %w", err)))
	}
	s := &Sink{db: db, secret: sec, opt: opt, schemas: schemas, rules: map[string]*ruleSQL{}}
	for _, sc := range opt.Schemas {
		s.rules[sc.Rule] = statements(sc, stored[sc.Rule])
	}
	s.batch = recordcodec.Batch{Name: "mysqlsink", Crawl: opt.Crawl, Schemas: schemas, Write: s.write,
		Wrap: func(ctx context.Context, err error) error { return sec.wrap(classify(ctx, err)) }}
	return s, nil
}

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
		s.db.Close()
	}
	return err
}

// MySQL and MariaDB error numbers of a server that is going away, busy,
// or that chose this transaction as a deadlock's victim: a later Flush may
// get through.
var unavailable = map[uint16]bool{
	1040: true,                                     // too many connections
	1053: true,                                     // server shutdown in progress
	1077: true, 1078: true, 1079: true, 1080: true, // shutdown
	1152: true, 1158: true, 1159: true, 1160: true, 1161: true, // aborted connection, network errors
	1205: true, // lock wait timeout
	1213: true, // deadlock
	1927: true, // connection killed (MariaDB)
}

// classify wraps record.ErrUnavailable around err when the server did not
// answer it (no connection, a connection lost, a server shutting down) or
// refused it for now (deadlock, lock wait): what a later Flush may get
// through.
func classify(ctx context.Context, err error) error {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		if unavailable[me.Number] {
			return fmt.Errorf("%w: %w", record.ErrUnavailable, err)
		}
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, sql.ErrConnDone) {
		return fmt.Errorf("%w: %w", record.ErrUnavailable, err)
	}
	return err
}

// secret is what an error must not show: the URL's password, as written
// and as escaped in a URL, and any URL's user information.
type secret struct{ words []string }

func secretOf(raw string) secret {
	var s secret
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			s = s.with(p)
		}
	}
	if i := strings.Index(raw, "://"); i >= 0 {
		// A URL too broken to parse: what lies between ':' and '@'.
		rest := raw[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if c := strings.Index(rest[:at], ":"); c >= 0 {
				s = s.with(rest[c+1 : at])
			}
		}
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

// wrap returns err with every form of the password, and every URL's user
// information, replaced by xxxxx in its text; errors.Is and errors.As
// still see through it.
func (s secret) wrap(err error) error {
	if err == nil {
		return nil
	}
	msg := redact.String(err.Error())
	for _, w := range s.words {
		msg = strings.ReplaceAll(msg, w, redact.Mark)
	}
	return &redacted{msg: msg, err: err}
}

type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }
