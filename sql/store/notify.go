package store

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
)

// changesChannel is the PostgreSQL channel every Bunting instance on a
// database listens on; sql/queries/changes.sql sends on it.
const changesChannel = "bunting_changes"

// Kinds of change events.
const (
	// EventFlag: a flag was created, changed or deleted; ID is the flag.
	EventFlag = "flag"
	// EventSegment: a segment was created, changed or deleted; ID is the segment.
	EventSegment = "segment"
	// EventEnv: an environment changed in a way that concerns SDKs and
	// caches: a secret was removed, its key changed, or it was deleted
	// (alone or with its project); ID is the environment.
	EventEnv = "env"
	// EventReset: notifications may have been missed (the listening
	// connection was lost, or a subscriber fell behind). Drop every cached
	// thing; Since is when the loss may have begun.
	EventReset = "reset"
)

// Event says that something SDKs or caches depend on changed. Events are
// sent inside the transaction that makes the change, so every instance on
// the database sees one exactly when the change commits, and never for a
// change that rolled back.
type Event struct {
	Kind  string    `json:"kind"`
	ID    uuid.UUID `json:"id"`
	OrgID uuid.UUID `json:"orgId"`
	// EnvIDs are the environments the change concerns.
	EnvIDs []uuid.UUID `json:"envIds,omitempty"`
	// AllEnvs stands for every environment of OrgID, when they are too many
	// to list in one notification.
	AllEnvs bool `json:"allEnvs,omitempty"`
	// Since is set on EventReset.
	Since time.Time `json:"since,omitzero"`
}

// Affects reports whether the event may concern the environment envID of
// the organization orgID.
func (e Event) Affects(orgID, envID uuid.UUID) bool {
	switch {
	case e.Kind == EventReset:
		return true
	case e.AllEnvs:
		return e.OrgID == orgID
	}
	return slices.Contains(e.EnvIDs, envID)
}

// maxNotifyPayload keeps a notification under PostgreSQL's 8000-byte limit.
const maxNotifyPayload = 7000

// notify queues an event in the transaction of q; PostgreSQL delivers it to
// every listener when the transaction commits.
func notify(ctx context.Context, q *db.Queries, ev Event) error {
	payload, err := eventPayload(ev)
	if err != nil {
		return err
	}
	return q.Notify(ctx, payload)
}

// eventPayload is an event as a notification carries it: past the size
// limit it names every environment of the organization instead of some.
func eventPayload(ev Event) (string, error) {
	b, err := json.Marshal(ev)
	if err != nil {
		return "", err
	}
	if len(b) > maxNotifyPayload {
		ev.EnvIDs, ev.AllEnvs = nil, true
		if b, err = json.Marshal(ev); err != nil {
			return "", err
		}
	}
	return string(b), nil
}

// Notifier fans the change events the store's listener receives out to
// subscribers. Publishing never blocks: a subscriber that falls far behind
// gets an EventReset in place of what it missed.
type Notifier struct {
	log  *slog.Logger
	live atomic.Bool

	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

func newNotifier(log *slog.Logger) *Notifier {
	return &Notifier{log: log, subs: map[*Subscription]struct{}{}}
}

// Changes is the store's notifier. It delivers nothing until Listen runs.
func (s *Store) Changes() *Notifier { return s.changes }

// Live reports whether the notifier is listening now; while it is not,
// changes made by other instances go unseen, so nothing may be cached.
func (n *Notifier) Live() bool { return n.live.Load() }

// up follows the listening connection. Every (re)connection publishes an
// EventReset first, since changes made while nobody listened were missed;
// whoever sees Live() from then on has been told.
func (n *Notifier) up(on bool, lost time.Time) {
	if on {
		n.publish(Event{Kind: EventReset, Since: lost})
	}
	n.live.Store(on)
}

// notified publishes the event a notification carries.
func (n *Notifier) notified(payload string) {
	var ev Event
	if err := json.Unmarshal([]byte(payload), &ev); err != nil || ev.Kind == "" {
		n.log.Warn("ignoring a malformed change notification", "payload", payload)
		return
	}
	n.publish(ev)
}

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
