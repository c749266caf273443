package extract

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/distscrape/distscrape/record"
)

// Step is one processor of a field (Scrapy's ItemLoader processors): the
// values its selector found pass through its steps in order, then empty
// values are dropped and the rest converted to the field's type. Exactly
// one of a Step's fields is set.
type Step struct {
	Split   string   // each value becomes its parts between Split (empty parts dropped)
	Join    string   // the values become one, Join between them
	Replace *Replace // in each value, every match of Regex becomes With
	Squash  bool     // in each value, every run of white space becomes one space
	Lower   bool     // each value in lower case
	Upper   bool     // each value in upper case
	Count   bool     // the values become their number (type int): "0" when none was found
	// Decimal is the decimal separator of the numbers, "," or ".": the
	// other one, spaces and apostrophes group thousands and are dropped
	// ("1.234,50 €" with "," is 1234.50), where the int and float types
	// otherwise guess.
	Decimal string
}

// Replace is a regex replacement; With may use $1 or ${name} for groups.
type Replace struct{ Regex, With string }

// step is a compiled Step.
type step struct {
	op   string // the Step field set, for messages
	arg  string
	re   *rx
	many bool // the step may leave several values (split)
	one  bool // the step leaves one value (join, count)
}

// compileSteps checks and compiles a field's steps for its type and all.
func compileSteps(steps []Step, typ record.Type, all bool) ([]step, []keyErr) {
	var out []step
	var errs []keyErr
	bad := func(i int, err error) {
		errs = append(errs, keyErr{Key: fmt.Sprintf("process[%d]", i), Err: err})
	}
	several := false // the values may be several after the steps so far
	for i, s := range steps {
		var ops []string
		var st step
		set := func(op, arg string) { ops = append(ops, op); st.op, st.arg = op, arg }
		if s.Split != "" {
			set("split", s.Split)
			st.many = true
		}
		if s.Join != "" {
			set("join", s.Join)
			st.one = true
		}
		if s.Replace != nil {
			set("replace", s.Replace.With)
			re, err := compileRx(s.Replace.Regex)
			if err != nil {
				bad(i, fmt.Errorf("replace: %w", err))
			} else if s.Replace.Regex == "" {
				bad(i, errors.New("replace: regex is empty"))
			}
			st.re = re
		}
		for _, b := range []struct {
			on bool
			op string
		}{{s.Squash, "squash"}, {s.Lower, "lower"}, {s.Upper, "upper"}, {s.Count, "count"}} {
			if b.on {
				set(b.op, "")
			}
		}
		st.one = st.one || s.Count
		if s.Decimal != "" {
			set("decimal", s.Decimal)
			if s.Decimal != "," && s.Decimal != "." {
				bad(i, fmt.Errorf("decimal: %q: want \",\" or \".\"", s.Decimal))
			}
			if typ != record.Int && typ != record.Float {
				bad(i, fmt.Errorf("decimal: numbers only: the field's type is %s, want int or float", typ))
			}
		}
		switch len(ops) {
		case 0:
			bad(i, errors.New("empty: want one of split, join, replace, squash, lower, upper, count, decimal"))
			continue
		case 1:
		default:
			bad(i, fmt.Errorf("%s in one step: one per step (a list keeps their order)", strings.Join(ops, " and ")))
			continue
		}
		if s.Count && typ != record.Int {
			bad(i, fmt.Errorf("count gives a number: the field's type is %s, want int", typ))
		}
		switch {
		case st.many:
			several = true
		case st.one:
			several = false
		}
		out = append(out, st)
	}
	if several && !all {
		errs = append(errs, keyErr{Key: "process", Err: errors.New("split leaves several values: set all: true, or join them after")})
	}
	return out, errs
}

// process runs f's steps over vals within the page's budget.
func (pg *page) process(f *field, vals []string) ([]string, error) {
	for _, st := range f.steps {
		switch st.op {
		case "split":
			var parts []string
			for _, v := range vals {
				for p := range strings.SplitSeq(v, st.arg) {
					if strings.TrimSpace(p) != "" {
						parts = append(parts, p)
					}
				}
			}
			vals = parts
		case "join":
			if len(vals) > 0 {
				vals = []string{strings.Join(vals, st.arg)}
			}
		case "count":
			vals = []string{strconv.Itoa(len(vals))}
		default:
			for i, v := range vals {
				out, err := pg.step(st, v, f.name)
				if err != nil {
					return nil, err
				}
				vals[i] = out
			}
		}
	}
	return vals, nil
}

// step applies a one-value step to v.
func (pg *page) step(st step, v, field string) (out string, err error) {
	switch st.op {
	case "replace":
		what := "field " + field + ": replace"
		defer recoverTo(&err, what)
		left := pg.left()
		if left <= 0 {
			return "", pg.spent(what)
		}
		re := st.re.get(left)
		defer st.re.put(re)
		return re.Replace(v, st.arg, -1, -1)
	case "squash":
		return strings.Join(strings.Fields(v), " "), nil
	case "lower":
		return strings.ToLower(v), nil
	case "upper":
		return strings.ToUpper(v), nil
	case "decimal":
		group := "."
		if st.arg == "." {
			group = ","
		}
		v = strings.NewReplacer(group, "", " ", "", "\u00a0", "", "\u202f", "", "'", "", "’", "").Replace(strings.TrimSpace(v))
		return strings.Replace(v, st.arg, ".", 1), nil
	}
	return v, nil
}
