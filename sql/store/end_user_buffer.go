package store

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/eval"
)

// End users seen by the SDK endpoints are not written while the request
// waits: they wait in one in-process buffer, where repeated keys coalesce,
// and RunEndUsers writes it every EndUserFlushEvery (sooner when
// endUserBatch keys are pending) with one statement per endUserBatch keys.
// The buffer holds at most maxPendingEndUsers keys and maxPendingBytes of
// keys, names and properties; past either, new keys are dropped (known ones
// still update) until the next write, so a flood costs bounded memory and
// never slows the insight endpoint.
const (
	EndUserFlushEvery  = time.Second
	endUserBatch       = 5_000
	maxPendingEndUsers = 100_000
	maxPendingBytes    = 64 << 20
	// DefaultMaxEndUsersPerEnv bounds the end users kept per environment
	// (BUNTING_MAX_END_USERS_PER_ENV): past it new keys are dropped.
	DefaultMaxEndUsersPerEnv = 1_000_000
	// maxEndUserProperties bounds the property names kept per environment.
	maxEndUserProperties = 1_000
)

type endUserKey struct {
	env uuid.UUID
	key string
}

// seenUser is one pending end user: the latest name and properties, and
// when the key was first and last seen while pending.
type seenUser struct {
	name        *string
	props       []eval.UserProperty
	first, last time.Time
	size        int
}

type endUserBuffer struct {
	mu      sync.Mutex
	pending map[endUserKey]*seenUser
	bytes   int
	dropped int64
	// kick asks RunEndUsers to write before the tick: a batch is pending.
	kick chan struct{}
	// writing serialises writes, so rows are never written out of order.
	writing sync.Mutex
}

func newEndUserBuffer() *endUserBuffer {
	return &endUserBuffer{pending: map[endUserKey]*seenUser{}, kick: make(chan struct{}, 1)}
}

func userSize(u eval.EndUser) int {
	n := len(u.KeyID) + 64
	if u.Name != nil {
		n += len(*u.Name)
	}
	for _, p := range u.CustomizedProperties {
		n += len(p.Name) + len(p.Value) + 32
	}
	return n
}

// SawEndUsers notes that SDKs of an environment evaluated for these users at
// at. It never waits for the database; users CheckEndUser refuses are
// skipped. The users are written by RunEndUsers or FlushEndUsers.
func (s *Store) SawEndUsers(envID uuid.UUID, users []eval.EndUser, at time.Time) {
	b := s.endUsers
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, u := range users {
		if CheckEndUser(u) != nil {
			continue
		}
		k := endUserKey{envID, u.KeyID}
		size := userSize(u)
		if p, ok := b.pending[k]; ok {
			if at.After(p.last) {
				p.last = at
			}
			if u.Name != nil {
				p.name = u.Name
			}
			if b.bytes-p.size+size <= maxPendingBytes {
				b.bytes += size - p.size
				p.props, p.size = u.CustomizedProperties, size
			}
			continue
		}
		if len(b.pending) >= maxPendingEndUsers || b.bytes+size > maxPendingBytes {
			b.dropped++
			continue
		}
		b.pending[k] = &seenUser{name: u.Name, props: u.CustomizedProperties, first: at, last: at, size: size}
		b.bytes += size
	}
	if len(b.pending) >= endUserBatch {
		select {
		case b.kick <- struct{}{}:
		default:
		}
	}
}

// RunEndUsers writes the seen end users every EndUserFlushEvery, or sooner
// when a batch is pending, until ctx ends. The last write is the caller's:
// FlushEndUsers after the SDK endpoints stopped taking requests.
func (s *Store) RunEndUsers(ctx context.Context) {
	t := time.NewTicker(EndUserFlushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.endUsers.kick:
		}
		// A write under way finishes when ctx ends (within 10 s), so stopping
		// never loses a batch already taken from the buffer.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if err := s.FlushEndUsers(wctx); err != nil {
			s.log.WarnContext(ctx, "writing end users", "err", err)
		}
		cancel()
	}
}

// FlushEndUsers writes every pending end user now. A batch the database
// refuses is dropped (and the error returned): end users are a convenience,
// and keeping them would let memory grow while the database is away.
func (s *Store) FlushEndUsers(ctx context.Context) error {
	b := s.endUsers
	b.writing.Lock()
	defer b.writing.Unlock()
	b.mu.Lock()
	pending, dropped := b.pending, b.dropped
	b.pending, b.bytes, b.dropped = map[endUserKey]*seenUser{}, 0, 0
	b.mu.Unlock()
	if dropped > 0 {
		s.log.WarnContext(ctx, "end users dropped: the buffer was full", "count", dropped)
	}
	keys := make([]endUserKey, 0, len(pending))
	for k := range pending {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b endUserKey) int {
		if c := strings.Compare(a.env.String(), b.env.String()); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	var firstErr error
	for len(keys) > 0 {
		n := min(len(keys), endUserBatch)
		p := db.UpsertEndUsersParams{MaxPerEnv: s.maxEndUsersPerEnv, MaxProperties: maxEndUserProperties,
			EnvIds: make([]uuid.UUID, n), KeyIds: make([]string, n), Names: make([]string, n),
			Properties: make([]json.RawMessage, n), FirstSeen: make([]time.Time, n), LastSeen: make([]time.Time, n)}
		for i, k := range keys[:n] {
			u := pending[k]
			p.EnvIds[i], p.KeyIds[i], p.FirstSeen[i], p.LastSeen[i] = k.env, k.key, u.first, u.last
			if u.name != nil {
				p.Names[i] = *u.name
			}
			p.Properties[i] = propertiesJSON(u.props)
		}
		keys = keys[n:]
		dropped, err := s.q.UpsertEndUsers(ctx, p)
		if err != nil {
			if firstErr == nil {
				firstErr = translate(err)
			}
			continue
		}
		if dropped > 0 {
			s.log.DebugContext(ctx, "new end users dropped: their environments keep the most allowed", "count", dropped)
		}
	}
	return firstErr
}

// propertiesJSON is customizedProperties as stored: never null.
func propertiesJSON(props []eval.UserProperty) json.RawMessage {
	if props == nil {
		props = []eval.UserProperty{}
	}
	b, _ := json.Marshal(props)
	return b
}
