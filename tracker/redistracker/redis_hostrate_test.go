package redistracker

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/distscrape/distscrape/internal/testkit/redistest"
)

func TestRedisReserveHost(t *testing.T) {
	b := setupRedis(t, redistest.Options{}, nil)
	const interval = 100 * time.Millisecond
	t.Run("spaced across callers", func(t *testing.T) {
		// 8 "workers" book 5 slots each at once: the bookings take the slots
		// 0..39 intervals after the first, so the last one is 39 intervals
		// out (measured from before the first call, it lies between 39
		// intervals and 39 intervals plus the time the calls took).
		var mu sync.Mutex
		var waits []time.Duration
		var wg sync.WaitGroup
		start := time.Now()
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					w, booked, err := b.tr.ReserveHost(b.ctx, "example.org:443", interval, time.Hour)
					if err != nil || !booked {
						t.Errorf("ReserveHost: %v, booked %v", err, booked)
						return
					}
					mu.Lock()
					waits = append(waits, w+time.Since(start)) // slot time, relative to start
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		if len(waits) != 40 {
			t.Fatalf("%d bookings, want 40", len(waits))
		}
		var latest time.Duration
		for _, w := range waits {
			latest = max(latest, w)
		}
		if min := 39 * interval; latest < min {
			t.Fatalf("the last slot is %v after the start; 40 bookings at %v apart need ≥ %v", latest, interval, min)
		}
		if latest > 39*interval+elapsed {
			t.Fatalf("the last slot is %v after the start; more than 40 slots were consumed (elapsed %v)", latest, elapsed)
		}
	})
	t.Run("hosts are independent", func(t *testing.T) {
		for i := range 3 {
			w, booked, err := b.tr.ReserveHost(b.ctx, "host-"+strconv.Itoa(i), time.Hour, time.Minute)
			if err != nil || !booked || w > time.Second {
				t.Fatalf("first booking of a fresh host: wait %v booked %v err %v", w, booked, err)
			}
		}
	})
	t.Run("too long a wait books nothing", func(t *testing.T) {
		if _, booked, err := b.tr.ReserveHost(b.ctx, "slow.example", time.Hour, time.Minute); err != nil || !booked {
			t.Fatalf("first booking: %v %v", booked, err)
		}
		w, booked, err := b.tr.ReserveHost(b.ctx, "slow.example", time.Hour, time.Minute)
		if err != nil || booked || w < 59*time.Minute {
			t.Fatalf("second booking within the hour: wait %v booked %v err %v; want ~1h, not booked", w, booked, err)
		}
		// Not booking left the slot where it was.
		w2, _, _ := b.tr.ReserveHost(b.ctx, "slow.example", time.Hour, time.Minute)
		if w2 > w {
			t.Fatalf("an unbooked reservation moved the slot: %v then %v", w, w2)
		}
		ttl, err := b.c.PTTL(b.ctx, b.keys.hostRate("slow.example")).Result()
		if err != nil || ttl <= 0 || ttl > time.Hour+2*time.Second {
			t.Fatalf("the host key expires in %v (%v); want about an hour", ttl, err)
		}
	})
}
