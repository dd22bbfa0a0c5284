package feed

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestSubscriptionOverflowBecomesAReset(t *testing.T) {
	n := NewNotifier()
	sub := n.Subscribe()
	for range maxQueued + 10 {
		n.publish(Event{Kind: EventFlag, ID: uuid.New()})
	}
	evs := sub.Take()
	if len(evs) != 10 || evs[0].Kind != EventReset || evs[0].Since.IsZero() {
		t.Fatalf("after overflowing: %d events, first %+v; want a reset and the 9 since", len(evs), evs[0])
	}
	sub.Close()
	n.publish(Event{Kind: EventFlag}) // a closed subscription gets nothing, and nothing panics
	done := make(chan struct{})
	go func() {
		for range sub.Ready() {
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Error("Ready is still open after Close")
	}
}

// TestAnEventTakenIsHeldByEverySubscription: a consumer that has taken an
// event from its subscription finds it in every other subscription too (or
// already taken from it), as the SDK endpoints' hub relies on when, having
// taken a change, it reads the cache fed by another subscription.
func TestAnEventTakenIsHeldByEverySubscription(t *testing.T) {
	n := NewNotifier()
	subs := make([]*Subscription, 8) // several, so a publication is a loop
	for i := range subs {
		subs[i] = n.Subscribe()
		defer subs[i].Close()
	}
	const events = maxQueued - 1 // fewer than a subscription holds: none overflows into a reset
	go func() {
		for i := range events {
			n.publish(Event{Kind: EventFlag, ID: uuid.UUID{byte(i >> 8), byte(i)}, Since: time.Unix(int64(i), 0)})
		}
	}()
	// seen is the last event each subscription has given up, by number.
	seen := make([]int64, len(subs))
	for i := range seen {
		seen[i] = -1
	}
	for taken := int64(-1); taken < events-1; {
		for _, ev := range subs[0].Take() {
			taken = ev.Since.Unix()
		}
		for i, s := range subs[1:] {
			for _, ev := range s.Take() {
				seen[i+1] = ev.Since.Unix()
			}
			if seen[i+1] < taken {
				t.Fatalf("event %d was taken from one subscription while another had only up to %d", taken, seen[i+1])
			}
		}
	}
}
