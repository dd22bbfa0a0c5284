package core

import (
	"context"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/feed"
)

// RecordChange writes an event into the change outbox in the transaction
// of q: every instance reads it once the transaction commits (package feed
// says how), and never for one that rolled back.
func (s *Core) RecordChange(ctx context.Context, q *db.Queries, ev feed.Event) error {
	event, err := feed.Encode(ctx, ev)
	if err != nil {
		return err
	}
	s.ChangesRecorded.Add(1)
	return q.RecordChange(ctx, event)
}

// Changes is the store's notifier. It delivers nothing until the listener
// of Feed runs.
func (s *Core) Changes() *feed.Notifier { return s.changes }

// Feed is what this store's change listener serves (feed.NewListener): the
// outbox and the notifier, the signal of this instance's commits, and the
// channel of changes to access.
func (s *Core) Feed() feed.Config {
	return feed.Config{Pool: s.Pool, Changes: s.changes, Committed: s.commits, Log: s.Log,
		Channels: []feed.Channel{{Name: authChannel, Up: s.access.up, Notified: s.access.moved}}}
}

// commitWatch is what a transaction left for after its commit: changes to
// announce and webhook deliveries to send. The counters are the store's,
// so a concurrent transaction's count may show too, which only wakes a
// worker once more.
type commitWatch struct{ changes, deliveries int64 }

func (s *Core) WatchCommit() commitWatch {
	return commitWatch{s.ChangesRecorded.Load(), s.OutboxWrites.Load()}
}

// committed wakes, after a transaction watched by w committed, the
// announcer of its changes and the sender of its deliveries, rather than
// leaving them to their next poll.
func (s *Core) Committed(w commitWatch) {
	if s.ChangesRecorded.Load() != w.changes {
		select {
		case s.commits <- struct{}{}:
		default:
		}
	}
	if s.OutboxWrites.Load() != w.deliveries {
		select {
		case s.OutboxKick <- struct{}{}:
		default:
		}
	}
}
