package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// oneRule is the smallest extract section, for tests of the other keys.
const oneRule = "extract: [{name: page, match: '.', fields: {title: {css: h1}}}]\n"

// shop is a listing + detail crawl into PostgreSQL.
const shop = `
crawl: shop
scraper:
  seeds: ["https://shop.example/shop/"]
  follow:
    - {css: 'a.product'}
    - {xpath: '//a[@rel="next"]/@href'}
extract:
  - name: product
    match: '/shop/item/'
    on_invalid: fail
    fields:
      title: {css: h1.title}
      price: {css: .price, regex: '', type: float, required: true}
      image: {css: img.main, attr: src, type: url}
      tags:  {css: .tag, all: true}
      in_stock: {xpath: '//span[@id="stock"]', type: bool, default: "false"}
  - name: listing_entry
    match: '/shop/(\?page=\d+)?$'
    each: {css: li.product}
    on_invalid: keep
    fields:
      name: {css: a}
      link: {css: a, type: url}
records:
  kind: postgres
  url: 'postgres://crawler:${PGPASSWORD}@db.internal:5432/shop?sslmode=verify-full'
  table_prefix: shop_
`

// api is an ID crawl of a JSON API, each item fetched with a POST.
const api = `
crawl: api
scraper:
  kind: id
  seeds: ["1"]
  download_url_fmt: 'https://api.example/api/item?v={id}'
  follow: [{json: '.related[].id'}]
  requests:
    - method: POST
      headers: {Content-Type: application/json, X-Api-Key: '${API_TOKEN}'}
      body: '{"id": "{id}", "from": "{key}"}'
extract:
  - name: item
    match: '.'
    fields:
      id: {json: .id, type: int, required: true}
      name: {json: .name}
      updated: {json: .updated_at, type: time}
      main_text: {text: main}
`

func TestExtractConfigs(t *testing.T) {
	t.Parallel()
	env := envOf(map[string]string{"PGPASSWORD": "pg-s3cret", "API_TOKEN": "tok123"})
	c, err := parse([]byte(shop), "shop.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range c.Extract[0].Fields {
		names = append(names, f.Name)
	}
	if want := []string{"title", "price", "image", "tags", "in_stock"}; !reflect.DeepEqual(names, want) {
		t.Errorf("fields %v, want the file's order %v", names, want)
	}
	if f := c.Extract[0].Fields[1]; f.Type != "float" || !f.Required || f.CSS != ".price" {
		t.Errorf("price: %+v", f)
	}
	if f := c.Extract[0].Fields[0]; f.Type != "string" {
		t.Errorf("title's type defaults to %q, want string", f.Type)
	}
	if c.Scraper.Follow[0].Attr != "href" || c.Scraper.Follow[0].Kind != "url" || c.Scraper.Follow[1].Attr != "" {
		t.Errorf("follow defaults: %+v", c.Scraper.Follow)
	}
	if c.Records.Kind != "postgres" || c.Key("records.dir") != nil {
		t.Errorf("records: %+v", c.Records)
	}
	out, err := Marshal(c.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "pg-s3cret") || !strings.Contains(string(out), "postgres://xxxxx@db.internal") {
		t.Errorf("redacted records.url:\n%s", out)
	}

	a, err := parse([]byte(api), "api.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	if a.Records.Kind != "jsonl" || a.Key("records.dir") != "out/records" || a.Key("records.rotate_bytes") != 256*MiB {
		t.Errorf("records default to jsonl when rules exist: %+v", a.Records)
	}
	if a.Scraper.Follow[0].Kind != "id" || a.Scraper.Requests[0].Method != "POST" {
		t.Errorf("follow %+v, requests %+v", a.Scraper.Follow, a.Scraper.Requests)
	}
	out, err = Marshal(a.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "tok123") {
		t.Errorf("redacted request header:\n%s", out)
	}
	if m, err := parse([]byte(minimal), "m.yaml", env); err != nil || m.Records.Kind != "" {
		t.Errorf("no rules, no records: %+v, %v", m.Records, err)
	}
}

// TestExtractRoundTrip: Marshal keeps the fields' order and every key.
func TestExtractRoundTrip(t *testing.T) {
	t.Parallel()
	env := envOf(map[string]string{"PGPASSWORD": "pg-s3cret", "API_TOKEN": "tok123"})
	for name, src := range map[string]string{"shop": shop, "api": api} {
		cfg, err := parse([]byte(src), name, env)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		again, err := parse(out, name+"-marshaled", envOf(nil))
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		again.secrets = cfg.secrets
		if !reflect.DeepEqual(cfg, again) {
			t.Fatalf("%s: round trip changed the config:\n%+v\n%+v\n%s", name, cfg, again, out)
		}
	}
}

// TestBadExtract: each way an extract rule, a records sink, a follow entry
// or a request template can be wrong, named by its key and line.
func TestBadExtract(t *testing.T) {
	t.Parallel()
	const head = "crawl: x\nscraper: {seeds: ['https://a.org/']}\n"
	const linkHead = "crawl: x\nscraper:\n  seeds: ['https://a.org/']\n"
	const idHead = "crawl: x\nscraper:\n  kind: id\n  id_regex: '\\d+'\n  download_url_fmt: 'https://a.org/{id}'\n"
	rule := func(fields string) string {
		return head + "extract:\n  - name: r\n    match: '.'\n    fields: " + fields + "\n"
	}
	tests := []struct {
		name, yaml string
		path, msg  string
	}{
		// Rules.
		{"rule without name", head + "extract: [{match: x, fields: {a: {css: b}}}]\n", "extract[0].name", "required"},
		{"rule name upper case", head + "extract: [{name: Product, match: x, fields: {a: {css: b}}}]\n", "extract[0].name", `"Product" is not a valid name`},
		{"rule name with a dash", head + "extract: [{name: my-rule, match: x, fields: {a: {css: b}}}]\n", "extract[0].name", "not a valid name"},
		{"rule name starts with a digit", head + "extract: [{name: 1st, match: x, fields: {a: {css: b}}}]\n", "extract[0].name", "not a valid name"},
		{"rule name too long", head + "extract: [{name: " + strings.Repeat("a", 64) + ", match: x, fields: {a: {css: b}}}]\n", "extract[0].name", "not a valid name"},
		{"rule names twice", head + "extract: [{name: a, match: x, fields: {a: {css: b}}}, {name: a, match: y, fields: {a: {css: b}}}]\n", "extract[1].name", "also the name of extract[0]"},
		{"rule name too long with prefix", head + "extract: [{name: " + strings.Repeat("a", 50) + ", match: x, fields: {a: {css: b}}}]\nrecords: {kind: sqlite, table_prefix: abcd_}\n", "extract[0].name", `at most 53 characters (the SQL sinks' versions table adds __versions, and SQL names stop at 63) (records.table_prefix "abcd_")`},
		{"rule name of a system table with prefix", head + "extract: [{name: class, match: x, fields: {a: {css: b}}}]\nrecords: {kind: sqlite, table_prefix: pg_}\n", "extract[0].name", "would start with pg_"},
		{"rule without match", head + "extract: [{name: a, fields: {a: {css: b}}}]\n", "extract[0].match", "required"},
		{"rule bad match", head + "extract: [{name: a, match: '(', fields: {a: {css: b}}}]\n", "extract[0].match", "missing closing )"},
		{"rule without fields", head + "extract: [{name: a, match: x}]\n", "extract[0].fields", "required"},
		{"fields a list", rule("[{css: b}]"), "extract[0].fields", "expected a mapping of field names"},
		{"bad on_invalid", head + "extract: [{name: a, match: x, on_invalid: ignore, fields: {a: {css: b}}}]\n", "extract[0].on_invalid", `unknown value "ignore" (want fail, skip or keep)`},
		{"each two selectors", head + "extract: [{name: a, match: x, each: {css: li, xpath: //li}, fields: {a: {css: b}}}]\n", "extract[0].each", "css and xpath given together"},
		{"each unknown key", head + "extract: [{name: a, match: x, each: {regex: x}, fields: {a: {css: b}}}]\n", "extract[0].each.regex", "unknown key"},
		{"rule misspelt key", head + "extract: [{name: a, match: x, feilds: {a: {css: b}}}]\n", "extract[0].feilds", "did you mean fields?"},
		// Field names.
		{"field name upper case", rule("{Title: {css: h1}}"), "extract[0].fields.Title", `field "Title" is not a valid name`},
		{"field name with a space", rule("{'the title': {css: h1}}"), "extract[0].fields.the title", "not a valid name"},
		{"field name with a dot", rule("{a.b: {css: h1}}"), "extract[0].fields.a.b", "not a valid name"},
		{"field name reserved key", rule("{key: {css: h1}}"), "extract[0].fields.key", "is a column every record has"},
		{"field name reserved url", rule("{url: {css: h1}}"), "extract[0].fields.url", "is a column every record has"},
		{"field name reserved idx", rule("{idx: {css: h1}}"), "extract[0].fields.idx", "is a column every record has"},
		{"field name twice", rule("{a: {css: h1}, a: {css: h2}}"), "extract[0].fields.a", "duplicate field"},
		// Selectors of a field: none, two, and the keys that do not apply.
		{"field without selector", rule("{a: {type: int}}"), "extract[0].fields.a", "no selector"},
		{"field css and xpath", rule("{a: {css: h1, xpath: //h1}}"), "extract[0].fields.a", "css and xpath given together"},
		{"field css and json", rule("{a: {css: h1, json: a.b}}"), "extract[0].fields.a", "css and json given together"},
		{"field json and regex", rule("{a: {json: a, regex: x}}"), "extract[0].fields.a", "json and regex given together"},
		{"field xpath and text", rule("{a: {xpath: //h1, text: main}}"), "extract[0].fields.a", "xpath and text given together"},
		{"field attr with json", rule("{a: {json: .a, attr: href}}"), "extract[0].fields.a.attr", `"href": attr goes with css or xpath, not with json`},
		{"field attr with regex", rule("{a: {regex: a, attr: href}}"), "extract[0].fields.a.attr", "not with regex"},
		{"field attr with text", rule("{a: {text: main, attr: href}}"), "extract[0].fields.a.attr", "not with text"},
		{"field attr alone", rule("{a: {attr: href}}"), "extract[0].fields.a", "no selector: a field takes one of css, xpath, json, regex or text (attr names an attribute"},
		{"field bad regex", rule("{a: {regex: '(?<n'}}"), "extract[0].fields.a.regex", "unrecognized grouping construct"},
		{"field bad text", rule("{a: {text: all}}"), "extract[0].fields.a.text", `unknown value "all" (want main`},
		{"field unknown key", rule("{a: {css: h1, selector: x}}"), "extract[0].fields.a.selector", "unknown key"},
		{"field not a mapping", rule("{a: h1}"), "extract[0].fields.a", "expected a mapping"},
		// Types and defaults.
		{"field bad type", rule("{a: {css: h1, type: integer}}"), "extract[0].fields.a.type", `unknown value "integer" (want string, int, float, bool, time or url)`},
		{"field default not an int", rule("{a: {css: h1, type: int, default: x}}"), "extract[0].fields.a.default", `"x" is not an int`},
		{"field default not a float", rule("{a: {css: h1, type: float, default: 'many'}}"), "extract[0].fields.a.default", "is not a float"},
		{"field default not a bool", rule("{a: {css: h1, type: bool, default: maybe}}"), "extract[0].fields.a.default", "is not a bool"},
		{"field default not a time", rule("{a: {css: h1, type: time, default: yesterday}}"), "extract[0].fields.a.default", "is not a time"},
		{"field default relative url", rule("{a: {css: h1, type: url, default: /x}}"), "extract[0].fields.a.default", `"/x" is not a url: not absolute`},
		{"field required with default", rule("{a: {css: h1, required: true, default: x}}"), "extract[0].fields.a.default", "never missing"},
		{"field all not a bool", rule("{a: {css: h1, all: many}}"), "extract[0].fields.a.all", "expected true or false"},
		// Records sinks.
		{"records unknown kind", head + oneRule + "records: {kind: mongodb}\n", "records.kind", `unknown value "mongodb" (want csv, jsonl, mysql, parquet, postgres or sqlite)`},
		{"records without rules", head + "records: {kind: sqlite}\n", "records.kind", "no extract rules"},
		{"records key without rules", head + "records: {path: a.db}\n", "records.path", "no extract rules"},
		{"records dir with postgres", head + oneRule + "records: {kind: postgres, url: 'postgres://h/db', dir: out}\n", "records.dir", "applies to records.kind csv, jsonl or parquet only"},
		{"records dir with sqlite", head + oneRule + "records: {kind: sqlite, dir: out}\n", "records.dir", "applies to records.kind csv, jsonl or parquet only"},
		{"records path with jsonl", head + oneRule + "records: {kind: jsonl, path: a.db}\n", "records.path", "applies to records.kind sqlite only"},
		{"records url with sqlite", head + oneRule + "records: {kind: sqlite, url: 'postgres://h/db'}\n", "records.url", "applies to records.kind mysql or postgres only"},
		{"records rotate_bytes with sqlite", head + oneRule + "records: {kind: sqlite, rotate_bytes: 1GiB}\n", "records.rotate_bytes", "applies to records.kind csv or jsonl only"},
		{"records rotate_bytes with parquet", head + oneRule + "records: {kind: parquet, rotate_bytes: 1GiB}\n", "records.rotate_bytes", "applies to records.kind csv or jsonl only"},
		{"records rotate_bytes small csv", head + oneRule + "records: {kind: csv, rotate_bytes: 1KiB}\n", "records.rotate_bytes", "out of range (1MiB to 1TiB)"},
		{"records csv empty dir", head + oneRule + "records: {kind: csv, dir: ' '}\n", "records.dir", "required when records.kind is csv"},
		{"records parquet empty dir", head + oneRule + "records: {kind: parquet, dir: ' '}\n", "records.dir", "required when records.kind is parquet"},
		{"records jsonl_shape unknown", head + oneRule + "records: {jsonl_shape: line}\n", "records.jsonl_shape", `unknown value "line" (want record or page)`},
		{"records jsonl_shape with csv", head + oneRule + "records: {kind: csv, jsonl_shape: page}\n", "records.jsonl_shape", "applies to records.kind jsonl only"},
		{"records jsonl_shape without rules", head + "records: {jsonl_shape: page}\n", "records.jsonl_shape", "no extract rules"},
		{"records table_prefix with jsonl", head + oneRule + "records: {table_prefix: a_}\n", "records.table_prefix", "applies to records.kind mysql, postgres or sqlite only"},
		{"records dir with mysql", head + oneRule + "records: {kind: mysql, url: 'mysql://h/db', dir: out}\n", "records.dir", "applies to records.kind csv, jsonl or parquet only"},
		{"records path with mysql", head + oneRule + "records: {kind: mysql, url: 'mysql://h/db', path: a.db}\n", "records.path", "applies to records.kind sqlite only"},
		{"records rotate_bytes with mysql", head + oneRule + "records: {kind: mysql, url: 'mysql://h/db', rotate_bytes: 1GiB}\n", "records.rotate_bytes", "applies to records.kind csv or jsonl only"},
		{"records mysql without url", head + oneRule + "records: {kind: mysql}\n", "records.url", "required when records.kind is mysql"},
		{"records mysql url scheme", head + oneRule + "records: {kind: mysql, url: 'postgres://h/db'}\n", "records.url", `scheme "postgres" not allowed (want mysql:// or mariadb://)`},
		{"records mysql driver dsn", head + oneRule + "records: {kind: mysql, url: 'u:p@tcp(h:3306)/db'}\n", "records.url", "not an absolute URL (want mysql:// or mariadb://)"},
		{"records mysql no database", head + oneRule + "records: {kind: mysql, url: 'mysql://h:3306'}\n", "records.url", "name one database after the host"},
		{"records mysql two path parts", head + oneRule + "records: {kind: mysql, url: 'mariadb://h/db/x'}\n", "records.url", "name one database after the host"},
		{"records mysql no host", head + oneRule + "records: {kind: mysql, url: 'mysql:///db'}\n", "records.url", "URL has no host"},
		{"records mysql tls", head + oneRule + "records: {kind: mysql, url: 'mysql://h/db?tls=yes'}\n", "records.url", `tls="yes": want one of true, false, skip-verify, preferred`},
		{"records mysql timeout", head + oneRule + "records: {kind: mysql, url: 'mysql://h/db?timeout=10'}\n", "records.url", `timeout="10": want a duration`},
		{"records mysql unknown parameter", head + oneRule + "records: {kind: mysql, url: 'mysql://h/db?parseTime=true'}\n", "records.url", `unknown parameter "parseTime"`},
		{"records mysql unset variable", head + oneRule + "records: {kind: mysql, url: 'mysql://u:${NOPE}@h/db'}\n", "records.url", "environment variable NOPE is not set"},
		{"records mysql table_prefix", head + oneRule + "records: {kind: mysql, url: 'mysql://h/db', table_prefix: Shop-}\n", "records.table_prefix", "use lower-case letters"},
		{"records postgres without url", head + oneRule + "records: {kind: postgres}\n", "records.url", "required when records.kind is postgres"},
		{"records postgres url scheme", head + oneRule + "records: {kind: postgres, url: 'mysql://h/db'}\n", "records.url", `scheme "mysql" not allowed (want postgres:// or postgresql://)`},
		{"records postgres sslmode", head + oneRule + "records: {kind: postgres, url: 'postgres://h/db?sslmode=yes'}\n", "records.url", `sslmode="yes"`},
		{"records postgres unset variable", head + oneRule + "records: {kind: postgres, url: 'postgres://u:${NOPE}@h/db'}\n", "records.url", "environment variable NOPE is not set"},
		// records.batch was accepted and did nothing: it is gone, and says what to do.
		{"records batch", head + oneRule + "records: {kind: sqlite, batch: 10}\n", "records.batch", "unknown key: remove it; a sink writes"},
		{"records batch with jsonl", head + oneRule + "records: {batch: 10}\n", "records.batch", "unknown key: remove it"},
		{"records batch postgres", head + oneRule + "records: {kind: postgres, url: 'postgres://h/db', batch: 500}\n", "records.batch", "in one transaction"},
		{"records rotate_bytes small", head + oneRule + "records: {rotate_bytes: 1KiB}\n", "records.rotate_bytes", "out of range (1MiB to 1TiB)"},
		{"records table_prefix", head + oneRule + "records: {kind: sqlite, table_prefix: Shop-}\n", "records.table_prefix", "use lower-case letters"},
		{"records misspelt", head + oneRule + "records: {knd: sqlite}\n", "records.knd", "did you mean kind?"},
		// scraper.follow.
		{"follow without selector", "crawl: x\nscraper: {seeds: ['https://a.org/'], follow: [{attr: href}]}\n", "scraper.follow[0]", "no selector"},
		{"follow two selectors", "crawl: x\nscraper: {seeds: ['https://a.org/'], follow: [{css: a, json: next}]}\n", "scraper.follow[0]", "css and json given together"},
		{"follow attr with json", "crawl: x\nscraper: {seeds: ['https://a.org/'], follow: [{json: .next, attr: href}]}\n", "scraper.follow[0].attr", `"href": attr goes with css or xpath, not with json`},
		{"follow three selectors", "crawl: x\nscraper: {seeds: ['https://a.org/'], follow: [{css: a, xpath: //a, json: .next}]}\n", "scraper.follow[0]", "css and xpath and json given together"},
		{"follow bad kind", "crawl: x\nscraper: {seeds: ['https://a.org/'], follow: [{css: a, kind: link}]}\n", "scraper.follow[0].kind", `unknown value "link" (want url or id)`},
		{"follow id in a link crawl", "crawl: x\nscraper: {seeds: ['https://a.org/'], follow: [{json: ids, kind: id}]}\n", "scraper.follow[0].kind", "id needs scraper.kind id"},
		{"follow url in an id crawl", idHead + "  follow: [{css: a, kind: url}]\n", "scraper.follow[0].kind", "url needs scraper.kind link"},
		// scraper.requests.
		{"request bad method", linkHead + "  requests: [{method: FETCH}]\n", "scraper.requests[0].method", `unknown method "FETCH"`},
		{"request lower-case method", linkHead + "  requests: [{method: post}]\n", "scraper.requests[0].method", "in capitals"},
		{"request GET with body", linkHead + "  requests: [{body: 'a=1'}]\n", "scraper.requests[0].body", "a GET has no body"},
		{"request unknown placeholder", linkHead + "  requests: [{method: POST, body: 'q={query}'}]\n", "scraper.requests[0].body", "unknown placeholder {query}"},
		{"request id in a link crawl", linkHead + "  requests: [{method: POST, body: 'id={id}'}]\n", "scraper.requests[0].body", "{id} is an ID crawl's"},
		{"request placeholder in a header", idHead + "  requests: [{headers: {X-Id: '{ids}'}}]\n", "scraper.requests[0].headers.X-Id", "unknown placeholder {ids}"},
		{"request bad JSON body", idHead + "  requests: [{method: POST, body: '{\"id\": {id}'}]\n", "scraper.requests[0].body", "not valid JSON"},
		{"request bad JSON by content type", idHead + "  requests: [{method: POST, headers: {Content-Type: application/json}, body: 'id={id}'}]\n", "scraper.requests[0].body", "not valid JSON"},
		{"request multipart body with a placeholder", idHead + "  requests: [{method: POST, headers: {Content-Type: multipart/form-data; boundary=x}, body: 'id={id}'}]\n", "scraper.requests[0].body", `cannot be escaped for Content-Type "multipart/form-data"`},
		{"request binary body with a placeholder", idHead + "  requests: [{method: POST, headers: {Content-Type: application/octet-stream}, body: 'id={id}'}]\n", "scraper.requests[0].body", "cannot be escaped"},
		{"request bad header name", linkHead + "  requests: [{headers: {'X Bad': a}}]\n", "scraper.requests[0].headers.X Bad", "not a valid header name"},
		{"request header newline", linkHead + "  requests: [{headers: {X-A: \"a\\r\\nB: 1\"}}]\n", "scraper.requests[0].headers.X-A", "line break"},
		{"request bad match", linkHead + "  requests: [{match: '[a', method: GET}]\n", "scraper.requests[0].match", "unterminated [] set"},
		{"id crawl without id_regex or follow", "crawl: x\nscraper: {kind: id, download_url_fmt: 'https://a.org/{id}'}\n", "scraper.id_regex", "unless scraper.follow finds the IDs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := parse([]byte(tt.yaml), "test.yaml", envOf(testEnv))
			if err == nil {
				t.Fatalf("accepted: %+v", cfg)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			for _, fe := range fieldErrors(err) {
				if fe.Path == tt.path && strings.Contains(fe.Error(), tt.msg) {
					if !strings.HasPrefix(fe.Pos, "test.yaml:") {
						t.Errorf("no line: %v", fe)
					}
					return
				}
			}
			t.Errorf("want %s: ...%s...; got:\n%v", tt.path, tt.msg, err)
		})
	}
}

// TestExtractProblemsAtOnce: one run reports every problem of every rule,
// each at its line.
func TestExtractProblemsAtOnce(t *testing.T) {
	t.Parallel()
	src := "crawl: x\nscraper: {seeds: ['https://a.org/']}\nextract:\n  - name: A\n    match: '('\n    fields:\n      key: {css: h1}\n      b: {css: h1, json: c}\nrecords: {kind: sqlite, url: 'postgres://h/d'}\n"
	_, err := parse([]byte(src), "c.yaml", envOf(nil))
	got := map[string]string{}
	for _, fe := range fieldErrors(err) {
		got[fe.Path] = fe.Pos
	}
	want := map[string]string{"extract[0].name": "c.yaml:4", "extract[0].match": "c.yaml:5", "extract[0].fields.key": "c.yaml:7",
		"extract[0].fields.b": "c.yaml:8", "records.url": "c.yaml:9"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v\n(%v)", got, want, err)
	}
}

// TestRecordsMySQL: the forms of a mysql records.url that record/mysqlsink
// reads pass, with the password from the environment and never shown.
func TestRecordsMySQL(t *testing.T) {
	env := envOf(map[string]string{"MYSQL_PASSWORD": "my-s3cret"})
	for _, u := range []string{
		"mysql://crawler:${MYSQL_PASSWORD}@db.internal:3306/shop?tls=true",
		"mariadb://crawler:${MYSQL_PASSWORD}@db.internal/shop",
		"mysql://crawler:${MYSQL_PASSWORD}@localhost/shop?socket=/run/mysqld/mysqld.sock&timeout=5s",
	} {
		src := "crawl: x\nscraper: {seeds: ['https://a.org/']}\n" + oneRule + "records: {kind: mysql, table_prefix: shop_, url: '" + u + "'}\n"
		c, err := parse([]byte(src), "c.yaml", env)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if c.Records.Kind != "mysql" || !strings.Contains(c.Key("records.url").(string), "my-s3cret") {
			t.Fatalf("%s: records %+v", u, c.Records.Kind)
		}
		out, err := Marshal(c.Redacted())
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), "my-s3cret") {
			t.Errorf("redacted records.url shows the password:\n%s", out)
		}
	}
}
