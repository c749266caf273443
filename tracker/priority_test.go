package tracker

import "testing"

func TestPlanLevels(t *testing.T) {
	for _, c := range []struct {
		name     string
		counts   Levels
		n, skip  int
		want     Levels
		wantSkip int
	}{
		{"one level", Levels{0: 5}, 3, 0, Levels{0: 3}, 0},
		{"highest first", Levels{0: 5, 7: 5}, 3, 0, Levels{7: 3}, 3},
		{"every 8th from the lowest", Levels{0: 5, 3: 9, 7: 20}, 16, 0, Levels{0: 2, 7: 14}, 0},
		{"guard count carried", Levels{0: 5, 7: 20}, 2, 6, Levels{0: 1, 7: 1}, 0},
		{"high runs out", Levels{0: 5, 9: 2}, 5, 0, Levels{0: 3, 9: 2}, 2},
		{"single level does not count", Levels{9: 4}, 4, 5, Levels{9: 4}, 5},
		{"empty", Levels{}, 4, 3, Levels{}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, skip := PlanLevels(c.counts, c.n, c.skip)
			if got != c.want || skip != c.wantSkip {
				t.Errorf("PlanLevels(%v, %d, %d) = %v, %d; want %v, %d", c.counts, c.n, c.skip, got, skip, c.want, c.wantSkip)
			}
		})
	}
}
