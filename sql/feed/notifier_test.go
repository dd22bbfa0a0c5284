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
