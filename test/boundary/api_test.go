package boundary

import (
	"fmt"
	"go/types"
	"slices"
	"strings"
	"testing"
)

// mustBePublic are the packages a user of the library imports; the test
// fails if one disappears, so it can never pass by walking nothing. Every
// other importable package of the module is walked too.
var mustBePublic = []string{
	"fetch", "manager", "saver", "saver/savertest", "saver/filesaver", "saver/tarsaver", "saver/warcsaver",
	"saver/redissaver", "saver/s3saver", "scraper", "scraper/scrapertest",
	"tracker", "tracker/memtracker", "tracker/redistracker", "tracker/trackertest",
}

// TestNoInternalTypeInExportedAPI fails on any internal/ type reachable
// from an exported declaration of a public package: func and method
// signatures, exported struct fields (and embedded ones, whose methods are
// promoted), interface methods, the types of vars and consts, type
// parameters' constraints. A user outside the module can neither name such
// a type nor implement an interface that mentions it.
func TestNoInternalTypeInExportedAPI(t *testing.T) {
	pkgs := load(t)
	for _, want := range mustBePublic {
		if _, ok := pkgs[module+"/"+want]; !ok {
			t.Errorf("public package %s not found", want)
		}
	}
	var walked []string
	for path, p := range pkgs {
		r, _ := rel(path)
		if isInternal(path) || p.Name == "main" || strings.HasPrefix(r, "cmd/") {
			continue
		}
		walked = append(walked, r)
		w := &apiWalker{seen: map[*types.Named]bool{}}
		scope := p.Types.Scope()
		for _, name := range scope.Names() {
			if obj := scope.Lookup(name); obj.Exported() {
				w.object(obj)
			}
		}
		slices.Sort(w.found)
		for _, f := range slices.Compact(w.found) {
			t.Errorf("%s: %s", r, f)
		}
	}
	slices.Sort(walked)
	t.Logf("walked %d packages: %s", len(walked), strings.Join(walked, " "))
}

// apiWalker collects the internal types reachable from exported objects.
type apiWalker struct {
	seen  map[*types.Named]bool // the module's named types walked through
	at    []string              // the path from the exported object, for the message
	found []string
}

func (w *apiWalker) object(obj types.Object) {
	w.at = []string{obj.Name()}
	switch o := obj.(type) {
	case *types.TypeName:
		if named, ok := o.Type().(*types.Named); ok {
			w.seen[named] = true
			w.typ(named.Underlying())
			w.methods(named)
			for i := range named.TypeParams().Len() {
				w.typ(named.TypeParams().At(i).Constraint())
			}
		} else { // an alias
			w.typ(o.Type())
		}
	default: // Func, Var, Const
		w.typ(obj.Type())
	}
}

// methods walks the exported methods of named and of *named.
func (w *apiWalker) methods(named *types.Named) {
	ms := types.NewMethodSet(types.NewPointer(named))
	for i := range ms.Len() {
		m := ms.At(i).Obj()
		if m.Exported() {
			w.in("method "+m.Name(), func() { w.typ(m.Type()) })
		}
	}
}

func (w *apiWalker) in(step string, f func()) {
	w.at = append(w.at, step)
	f()
	w.at = w.at[:len(w.at)-1]
}

func (w *apiWalker) typ(t types.Type) {
	if t == nil {
		return
	}
	if a, ok := t.(*types.Alias); ok {
		w.named(a.Obj(), func() { w.typ(a.Rhs()) })
		return
	}
	switch t := t.(type) {
	case *types.Named:
		w.named(t.Obj(), func() {
			for i := range t.TypeArgs().Len() {
				w.typ(t.TypeArgs().At(i))
			}
			// An unexported type of the module is walked through, once:
			// its exported fields and methods are part of the API too.
			if p := t.Obj().Pkg(); p != nil && !t.Obj().Exported() && !w.seen[t] {
				if _, ok := rel(p.Path()); ok {
					w.seen[t] = true
					w.typ(t.Underlying())
					w.methods(t)
				}
			}
		})
	case *types.Pointer:
		w.typ(t.Elem())
	case *types.Slice:
		w.typ(t.Elem())
	case *types.Array:
		w.typ(t.Elem())
	case *types.Map:
		w.typ(t.Key())
		w.typ(t.Elem())
	case *types.Chan:
		w.typ(t.Elem())
	case *types.Signature:
		w.tuple("param", t.Params())
		w.tuple("result", t.Results())
		for i := range t.TypeParams().Len() {
			w.typ(t.TypeParams().At(i).Constraint())
		}
	case *types.Struct:
		for i := range t.NumFields() {
			if f := t.Field(i); f.Exported() || f.Embedded() {
				w.in("field "+f.Name(), func() { w.typ(f.Type()) })
			}
		}
	case *types.Interface:
		for i := range t.NumMethods() {
			if m := t.Method(i); m.Exported() {
				w.in("method "+m.Name(), func() { w.typ(m.Type()) })
			}
		}
		for i := range t.NumEmbeddeds() {
			w.typ(t.EmbeddedType(i))
		}
	case *types.Union:
		for i := range t.Len() {
			w.typ(t.Term(i).Type())
		}
	case *types.TypeParam:
		w.typ(t.Constraint())
	}
}

// named records obj if it lives in an internal package, then walks on.
func (w *apiWalker) named(obj *types.TypeName, walk func()) {
	if p := obj.Pkg(); p != nil && isInternal(p.Path()) {
		w.found = append(w.found, fmt.Sprintf("%s uses %s.%s", strings.Join(w.at, ": "), p.Path(), obj.Name()))
		return
	}
	walk()
}

func (w *apiWalker) tuple(kind string, tup *types.Tuple) {
	for i := range tup.Len() {
		w.in(fmt.Sprintf("%s %d", kind, i), func() { w.typ(tup.At(i).Type()) })
	}
}

// TestWalkerFindsEveryLeak proves the walker on testdata/leaky, one row per
// way of leaking an internal type.
func TestWalkerFindsEveryLeak(t *testing.T) {
	const resolver, options = "internal/urlnorm.Resolver", "internal/urlnorm.Options"
	tests := []struct{ obj, want string }{
		{"Field", "Field: field R uses " + resolver},
		{"Embedded", "Embedded: field Resolver uses " + resolver},
		{"Method", "Method: method M: param 0 uses " + options},
		{"ViaUnexported", "ViaUnexported: result 0: field Q uses " + resolver},
		{"Interface", "Interface: method M: param 0: param 0 uses " + resolver},
		{"Var", "Var uses " + resolver},
		{"Alias", "Alias uses " + options},
		{"Generic", "Generic uses " + resolver},
		{"Promoted", "Promoted: method M: result 0 uses " + options},
		{"Clean", ""},
	}
	p := loadOne(t, "./test/boundary/testdata/leaky")
	for _, tt := range tests {
		t.Run(tt.obj, func(t *testing.T) {
			w := &apiWalker{seen: map[*types.Named]bool{}}
			w.object(p.Types.Scope().Lookup(tt.obj))
			got := strings.ReplaceAll(strings.Join(w.found, "\n"), module+"/", "")
			if tt.want == "" && got != "" {
				t.Errorf("found %q, want nothing", got)
			}
			if tt.want != "" && !slices.Contains(strings.Split(got, "\n"), tt.want) {
				t.Errorf("found %q, want %q among them", got, tt.want)
			}
		})
	}
}
