package config

// The config knows the drivers linked in; its tests link the drivers whose
// keys they check (the program links its own: cmd/distscrape/drivers.go).
import (
	"reflect"
	"strings"
	"testing"

	_ "github.com/distscrape/distscrape/fetch/render/chromium"
	_ "github.com/distscrape/distscrape/record/csvsink"
	_ "github.com/distscrape/distscrape/record/jsonlsink"
	_ "github.com/distscrape/distscrape/record/mysqlsink"
	_ "github.com/distscrape/distscrape/record/parquetsink"
	_ "github.com/distscrape/distscrape/record/pgsink"
	_ "github.com/distscrape/distscrape/record/sqlitesink"
	_ "github.com/distscrape/distscrape/saver/filesaver"
	_ "github.com/distscrape/distscrape/saver/redissaver"
	_ "github.com/distscrape/distscrape/saver/s3saver"
	_ "github.com/distscrape/distscrape/saver/tarsaver"
	_ "github.com/distscrape/distscrape/saver/warcsaver"
	_ "github.com/distscrape/distscrape/tracker/memtracker"
	_ "github.com/distscrape/distscrape/tracker/redistracker"
)

// TestDriverSections: the section of every linked driver is a pointer to a
// struct whose exported fields are keys the config can read: a yaml name,
// a scalar type, a default tag of that type, and no key the section has
// of its own (kind, keep_versions, ...).
func TestDriverSections(t *testing.T) {
	for i := range driverSections {
		ds := &driverSections[i]
		own := fieldsOf(reflect.TypeOf(Config{}).Field(fieldsOf(reflect.TypeOf(Config{}))[ds.name]).Type)
		if len(ds.kinds()) == 0 {
			t.Errorf("%s: no driver linked", ds.name)
		}
		for _, kind := range ds.kinds() {
			sec, _ := ds.new(kind)
			st := sectionType(sec)
			if st == nil {
				t.Errorf("%s.kind %s: section %T is not a pointer to a struct", ds.name, kind, sec)
				continue
			}
			v := reflect.New(st).Elem()
			for j := 0; j < st.NumField(); j++ {
				f := st.Field(j)
				name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
				where := ds.name + "." + name + " (" + kind + ")"
				switch {
				case !f.IsExported():
					continue
				case name == "" || name == "-":
					t.Errorf("%s.kind %s: field %s has no yaml key", ds.name, kind, f.Name)
					continue
				case !isScalarType(f.Type):
					t.Errorf("%s: type %s is no scalar the config reads", where, f.Type)
				}
				if _, clash := own[name]; clash {
					t.Errorf("%s: the section's own key", where)
				}
				if def, ok := f.Tag.Lookup("default"); ok {
					if err := setScalar(v.Field(j), def); err != nil || v.Field(j).IsZero() {
						t.Errorf("%s: default %q: %v (a default is a value of the field's type, not zero)", where, def, err)
					}
				}
			}
		}
	}
}
