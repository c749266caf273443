package record

import "context"

// RuleCounts are the current records a store holds of one rule.
type RuleCounts struct {
	Records int64 // every current record, valid or kept invalid
	Invalid int64 // those with status invalid (on_invalid: keep)
	// Changed counts those a revisit changed (Record.Change is Changed).
	Changed int64
	// Fields counts, by field, the records where it has a value (not
	// NULL: a default taken counts). A field with no value in any record
	// is left out: Records less its count are the records without one.
	Fields map[string]int64
}

// Counter is a Reader that can count its current records by rule without
// reading them back (a count per table in SQL): what status and the
// dashboard ask for, at a cost that does not grow with the records' size.
// A rule without records is left out.
type Counter interface {
	Counts(ctx context.Context) (map[string]RuleCounts, error)
}

// CountSets counts sets by rule as a Counter does: the fallback of a
// Reader that cannot count otherwise.
func CountSets(sets []Set) map[string]RuleCounts {
	out := map[string]RuleCounts{}
	for _, s := range sets {
		if len(s.Records) == 0 {
			continue
		}
		c := out[s.Rule]
		for _, r := range s.Records {
			c.Records++
			if r.Status == Invalid {
				c.Invalid++
			}
			if r.Change == Changed {
				c.Changed++
			}
			for name, v := range r.Fields {
				if v == nil {
					continue
				}
				if c.Fields == nil {
					c.Fields = map[string]int64{}
				}
				c.Fields[name]++
			}
		}
		out[s.Rule] = c
	}
	return out
}

// FieldCounts is RuleCounts.Fields of a counting reader: found[i] records
// with a value of fields[i], the fields without one left out; nil when
// none has one.
func FieldCounts(fields []Field, found []int64) map[string]int64 {
	var out map[string]int64
	for i, f := range fields {
		if found[i] == 0 {
			continue
		}
		if out == nil {
			out = map[string]int64{}
		}
		out[f.Name] = found[i]
	}
	return out
}
