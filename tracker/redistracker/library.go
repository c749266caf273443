package redistracker

import (
	"context"
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/lib/*.lua lua/ops/*.lua
var luaFS embed.FS

// library is the Redis Functions library of every operation (ops.go): the
// shared code of lua/lib/ (its top level, constants and functions, runs
// once, at FUNCTION LOAD), then one function per operation. Its name
// carries a hash of its code, so two versions of distscrape in one fleet
// load a library each and never replace each other's functions.
type library struct {
	name     string // distscrape_<hash>
	fnPrefix string // ds_<hash>_: an operation's function is fnPrefix + op.fn
	code     string
}

// libHash stands for the library's hash while it is assembled.
const libHash = "@HASH@"

// libFiles are the files of lua/lib/ in the order they are concatenated:
// each uses what the ones before it declare.
var libFiles = []string{"codes", "state", "encode", "meta", "labels", "levels", "hosts", "leases",
	"dedup", "pending", "workers", "requeue", "revisits", "shared", "call", "outbox"}

// buildLibrary assembles the library once per process: the shebang naming
// it, the key names keys.go generates, lua/lib/, then each operation's
// function registered as ds_<hash>_<fn>.
var buildLibrary = sync.OnceValues(func() (*library, error) {
	var b strings.Builder
	// KEYS and ARGV are not globals in a function: they are the library's
	// locals, set by each callback before it runs its operation.
	b.WriteString("local KEYS, ARGV\n")
	b.WriteString(luaKeyNames())
	shared, err := libSource()
	if err != nil {
		return nil, err
	}
	b.WriteString(shared)
	done := map[string]*opDef{}
	for _, o := range operations {
		if d, ok := done[o.fn]; ok {
			if d.readOnly != o.readOnly || d.bare != o.bare {
				return nil, fmt.Errorf("operations %s and %s share function %s but not its flags", d.name, o.name, o.fn)
			}
			continue
		}
		done[o.fn] = o
		body, err := luaFS.ReadFile("lua/ops/" + o.fn + ".lua")
		if err != nil {
			return nil, err
		}
		// A do block per operation: its function is no local of the chunk
		// (Lua 5.1 allows at most 200), and the body is the function's
		// body. The library's locals a body uses are its upvalues (at most
		// 60; FUNCTION LOAD refuses more).
		fmt.Fprintf(&b, "\ndo\nlocal function op()\n%s\nend\n", body)
		start := "begin() "
		if o.bare {
			start = ""
		}
		flags := ""
		if o.readOnly {
			flags = ", flags = {'no-writes'}"
		}
		fmt.Fprintf(&b, "redis.register_function{function_name = 'ds_%s_%s', callback = function(keys, args) KEYS, ARGV = keys, args %sreturn op() end%s}\nend\n",
			libHash, o.fn, start, flags)
	}
	sum := sha1.Sum([]byte(b.String()))
	hash := hex.EncodeToString(sum[:])[:12]
	l := &library{name: "distscrape_" + hash, fnPrefix: "ds_" + hash + "_"}
	l.code = "#!lua name=" + l.name + "\n" + strings.ReplaceAll(b.String(), libHash, hash)
	return l, nil
})

// libSource is lua/lib/'s files, concatenated in libFiles' order.
func libSource() (string, error) {
	var b strings.Builder
	for _, f := range libFiles {
		code, err := luaFS.ReadFile("lua/lib/" + f + ".lua")
		if err != nil {
			return "", err
		}
		b.Write(code)
		b.WriteString("\n")
	}
	return b.String(), nil
}

// luaFunctions lists the operation files of lua/ops/ (without .lua).
func luaFunctions() ([]string, error) {
	ents, err := fs.ReadDir(luaFS, "lua/ops")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".lua"))
	}
	slices.Sort(out)
	return out, nil
}

// loadLibrary loads the library (FUNCTION LOAD) on every master: on a
// cluster each, the crawl's slot may be on any of them and move; replicas
// get it by replication.
func loadLibrary(ctx context.Context, c redis.UniversalClient) (*library, error) {
	l, err := buildLibrary()
	if err != nil {
		return nil, err
	}
	if err := l.load(ctx, c); err != nil {
		return nil, fmt.Errorf("function load %s: %w", l.name, err)
	}
	return l, nil
}

// load loads the library on every master, without REPLACE: a library of
// that name is this code (its name is its hash), so "already exists" is
// loaded.
func (l *library) load(ctx context.Context, c redis.UniversalClient) error {
	one := func(ctx context.Context, n redis.Cmdable) error {
		err := n.FunctionLoad(ctx, l.code).Err()
		if err != nil && !strings.Contains(err.Error(), "'"+l.name+"' already exists") {
			return explain(err) // FUNCTION LOAD is refused at maxmemory
		}
		return nil
	}
	if cc, ok := c.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			if err := one(ctx, m); err != nil {
				return fmt.Errorf("%s: %w", m.Options().Addr, err)
			}
			return nil
		})
	}
	return one(ctx, c)
}
