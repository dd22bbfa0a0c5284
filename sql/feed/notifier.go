package feed

import (
	"sync"
	"sync/atomic"
	"time"
)

// Notifier fans the change events a Listener reads out to subscribers.
// Publishing never blocks: a subscriber that falls far behind gets an
// EventReset in place of what it missed.
type Notifier struct {
	live atomic.Bool

	// mu is held to publish an event to every subscription at once; Take
	// reads under it, so a consumer that took an event knows every other
	// subscription holds it too (the SDK endpoints' hub, having taken a
	// change, reads the cache, which must have taken it as well).
	mu   sync.RWMutex
	subs map[*Subscription]struct{}
}

// NewNotifier returns a notifier; it delivers nothing until a Listener runs.
func NewNotifier() *Notifier {
	return &Notifier{subs: map[*Subscription]struct{}{}}
}

// Live reports whether the notifier's Listener is listening now; while it
// is not, changes made by other instances may go unseen for a while, so
// nothing may be cached.
func (n *Notifier) Live() bool { return n.live.Load() }

func (n *Notifier) setLive(on bool) { n.live.Store(on) }

// SetLive says whether events are arriving, for a notifier fed by Publish
// rather than a Listener (a relay's memory, fed by its upstream).
func (n *Notifier) SetLive(on bool) { n.setLive(on) }

// Publish hands an event to every subscriber, as a Listener does: for
// changes that come from somewhere other than the database (a relay's
// upstream).
func (n *Notifier) Publish(ev Event) { n.publish(ev) }

// publish hands an event to every subscriber without waiting for any.
func (n *Notifier) publish(ev Event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for s := range n.subs {
		s.push(ev)
	}
}

// Subscribe returns a subscription to every event from now on.
func (n *Notifier) Subscribe() *Subscription {
	s := &Subscription{n: n, ready: make(chan struct{}, 1)}
	n.mu.Lock()
	n.subs[s] = struct{}{}
	n.mu.Unlock()
	return s
}

// maxQueued is how many events a subscription holds before it gives up on
// them and holds a single EventReset instead.
const maxQueued = 4096

// Subscription queues events for one consumer.
type Subscription struct {
	n      *Notifier
	mu     sync.Mutex
	queue  []Event
	oldest time.Time // when the oldest queued event arrived
	closed bool
	ready  chan struct{}
}

func (s *Subscription) push(ev Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	switch {
	case len(s.queue) == 0:
		s.oldest = time.Now()
	case len(s.queue) >= maxQueued:
		since := s.oldest
		if s.queue[0].Kind == EventReset && s.queue[0].Since.Before(since) {
			since = s.queue[0].Since
		}
		s.queue = s.queue[:0]
		ev = Event{Kind: EventReset, Since: since}
	}
	s.queue = append(s.queue, ev)
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Ready is signalled when events are waiting, and closed with the subscription.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// Take returns the waiting events, oldest first, and empties the queue.
func (s *Subscription) Take() []Event {
	s.n.mu.RLock() // not in the middle of an event's publication
	defer s.n.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue
	s.queue = nil
	return q
}

// Close ends the subscription.
func (s *Subscription) Close() {
	s.n.mu.Lock()
	delete(s.n.subs, s)
	s.n.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.ready)
	}
}
