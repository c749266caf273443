package tracker

// Levels is the pending count of each priority level, 0..MaxPriority.
type Levels [MaxPriority + 1]int64

// PlanLevels plans one Checkout of up to n leases over the pending counts
// per level: each lease from the highest non-empty level, except that while
// two or more levels are non-empty every StarveEvery-th lease comes from
// the lowest of them. skip is the guard's count carried from one Checkout
// to the next (leases granted past the lowest non-empty level since it last
// got one); PlanLevels returns how many leases to take from each level and
// the new count. Both engines plan with this rule (redistracker's
// checkout.lua runs the same loop). O(n · levels).
func PlanLevels(counts Levels, n, skip int) (want Levels, newSkip int) {
	for range n {
		hi, lo := -1, -1
		for p := MaxPriority; p >= 0; p-- {
			if counts[p] > 0 {
				if hi < 0 {
					hi = p
				}
				lo = p
			}
		}
		if hi < 0 {
			break
		}
		p := hi
		if lo != hi {
			if skip >= StarveEvery-1 {
				p, skip = lo, 0
			} else {
				skip++
			}
		}
		counts[p]--
		want[p]++
	}
	return want, skip
}
