// Package feed carries the changes SDKs and caches depend on from the
// transaction that makes them to every Bunting instance on the database.
//
// How changes are announced: a write records its change (an Event, as JSON)
// in the table change_outbox, in its own transaction, and notifies nothing
// there. PostgreSQL orders the commits of transactions that NOTIFY under one
// lock, for every database of the server, held until the commit is flushed,
// so writes that notified committed one at a time; writes that only insert
// a row commit side by side. Once the write commits, the store signals this instance's
// Listener, which sends one empty NOTIFY on bunting_changes in a transaction
// of its own (it writes nothing, so it holds that lock for no flush), however
// many writes committed meanwhile.
//
// Every instance's Listener LISTENs on bunting_changes (with
// github.com/jackc/pgxlisten) and, when woken, when it (re)connects, and
// every Options.Poll in any case, reads the outbox from where it stopped and
// hands the changes in order to its Notifier's subscribers. A notification
// is only a wake-up: one lost, or sent by a process that runs no Listener,
// delays changes until the next read and loses none.
//
// Where a reader stopped is the snapshot of its last read
// (pg_current_snapshot), not a sequence number: sequence numbers are taken
// before commit, so a change with a lower one can commit after a higher one
// was read, and "everything past the highest seen" would skip it. A read
// returns exactly the changes of the transactions its last snapshot did not
// see (running then, or begun since) that have committed now, and its own
// snapshot is the next position; each committed change is in exactly one
// read, as PgQ reads its queues. Within a read changes are in seq order.
// Changes to one flag (or segment) are in order: the second change's
// transaction locks the row the first one changed, so it writes its outbox
// row, and takes its seq, only after the first committed; a read that sees
// the second sees the first, in the same read with a lower seq or in an
// earlier read.
//
// The outbox keeps Options.Keep of changes. Pruning remembers the newest
// transaction it deleted changes of; a reader whose last snapshot had not
// seen that transaction may have missed changes and publishes an EventReset
// in their place, as it does when it starts with nothing read (Options.From
// resumes from a position an earlier run reported instead).
package feed

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/google/uuid"
)

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
	// EventRelayProxy: a relay proxy was changed or deleted (its scope,
	// its key revoked); ID is the relay proxy. It names no environment, so
	// only the relays' own connections act on it.
	EventRelayProxy = "relay-proxy"
	// EventReset: changes may have been missed (nothing was read yet, or
	// the outbox was pruned past where the reader stopped), or a subscriber
	// fell behind. Drop every cached thing; Since is when the loss may
	// have begun.
	EventReset = "reset"
)

// Event says that something SDKs or caches depend on changed. It is written
// in the transaction that makes the change, so every instance reads it
// after the change commits, and never for a change that rolled back.
type Event struct {
	Kind  string    `json:"kind"`
	ID    uuid.UUID `json:"id"`
	OrgID uuid.UUID `json:"orgId"`
	// EnvIDs are the environments the change concerns.
	EnvIDs []uuid.UUID `json:"envIds,omitempty"`
	// AllEnvs stands for every environment of OrgID, when they are too many
	// to list in one event.
	AllEnvs bool `json:"allEnvs,omitempty"`
	// Since is set on EventReset.
	Since time.Time `json:"since,omitzero"`
	// At is when the change was written, in its transaction just before it
	// commits (Encode sets it): where the delay to SDKs, which the metrics
	// report, starts.
	At time.Time `json:"at,omitzero"`
	// Trace is the W3C trace context of the request that made the change
	// (TraceParent), when it was traced: whoever handles the change ties
	// its own span to it.
	Trace string `json:"trace,omitempty"`
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

// maxEventSize keeps an outbox row, read by every instance, small.
const maxEventSize = 7000

// Encode is an event as the outbox keeps it, stamped with the time it is
// written unless it has one, and with the trace context of the request ctx
// belongs to: past the size limit it names every environment of the
// organization instead of some.
func Encode(ctx context.Context, ev Event) (string, error) {
	if ev.At.IsZero() && ev.Kind != EventReset {
		ev.At = time.Now()
	}
	ev.Trace = TraceParent(ctx)
	b, err := json.Marshal(ev)
	if err != nil {
		return "", err
	}
	if len(b) > maxEventSize {
		ev.EnvIDs, ev.AllEnvs = nil, true
		if b, err = json.Marshal(ev); err != nil {
			return "", err
		}
	}
	return string(b), nil
}
