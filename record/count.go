package record

import "context"

// RuleCounts are the current records a store holds of one rule.
type RuleCounts struct {
	Records int64 // every current record, valid or kept invalid
	Invalid int64 // those with status invalid (on_invalid: keep)
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
		}
		out[s.Rule] = c
	}
	return out
}
