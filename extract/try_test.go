package extract

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/distscrape/distscrape/record"
)

// Try returns what Extract returns, plus every record made and why each
// field without a value has none; the field counts see every record.
func TestTry(t *testing.T) {
	page := `<html><body><h1>Tea</h1><p class="price">n/a</p><p class="blank"> </p></body></html>`
	e := mustCompile(t, Rule{Name: "product", Match: ".", Fields: []Field{
		{Name: "title", CSS: "h1"},
		{Name: "price", CSS: ".price", Type: record.Float},
		{Name: "sku", CSS: ".sku", Required: true},
		{Name: "blank", CSS: ".blank"},
		{Name: "stock", Regex: `stock: (\d+)`},
	}})
	tr := e.Try(context.Background(), htmlPage(page))
	sets, err := e.Extract(context.Background(), htmlPage(page))
	if tr.Sets != nil || sets != nil || !errors.Is(tr.Err, ErrInvalid) || tr.Err.Error() != err.Error() {
		t.Fatalf("Try: %v, %v; Extract: %v, %v", tr.Sets, tr.Err, sets, err)
	}
	if len(tr.Rules) != 1 || len(tr.Rules[0].Records) != 1 || tr.Rules[0].Records[0].Status != record.Invalid {
		t.Fatalf("rules: %+v", tr.Rules)
	}
	want := []FieldNote{
		{Field: "price", Why: `"n/a" is not a float`},
		{Field: "sku", Required: true, Why: "css matched nothing"},
		{Field: "blank", Why: "css matched only empty text"},
		{Field: "stock", Why: "regex matched nothing"},
	}
	got := tr.Rules[0].Notes[0]
	if !reflect.DeepEqual(got, want) {
		t.Errorf("notes: %+v, want %+v", got, want)
	}
	fc := e.FieldCounts()["product"]
	if fc["title"] != (FieldCount{Found: 2}) || fc["sku"] != (FieldCount{Empty: 2}) || fc["price"] != (FieldCount{Found: 2}) {
		t.Errorf("field counts: %+v", fc)
	}

	// A valid page: the same Sets from both.
	e = mustCompile(t, Rule{Name: "product", Match: ".", Fields: []Field{{Name: "title", CSS: "h1", Required: true}}})
	tr = e.Try(context.Background(), htmlPage(page))
	sets, err = e.Extract(context.Background(), htmlPage(page))
	if tr.Err != nil || err != nil || !reflect.DeepEqual(tr.Sets, sets) || len(sets) != 1 || sets[0].Records[0].Fields["title"] != "Tea" {
		t.Errorf("Try %+v, Extract %+v %v", tr, sets, err)
	}
}
