// Package runner holds the work a Bunting process does in the background,
// beside its requests: writing the end users the SDK endpoints saw, and
// applying scheduled flag changes when due. Each runner is a small type
// over the store; the store keeps the domain operations they call.
package runner

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
)

// End users seen by the SDK endpoints are not written while the request
// waits: they wait in one in-process buffer, where repeated keys coalesce,
// and EndUsers.Run writes it every EndUserFlushEvery (sooner when
// store.EndUserBatch keys are pending). The buffer holds at most
// maxPendingEndUsers keys and maxPendingBytes of keys, names and
// properties; past either, new keys are dropped (known ones still update)
// until the next write, so a flood costs bounded memory and never slows the
// insight endpoint.
const (
	EndUserFlushEvery  = time.Second
	maxPendingEndUsers = 100_000
	maxPendingBytes    = 64 << 20
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
	// via is the secret that first reported the key while pending (uuid.Nil
	// when unknown), which a new end user counts against.
	via uuid.UUID
}

// LimitNew is how many of n new end users a secret may add now; it answers
// at most n and takes what it grants from the secret's allowance.
type LimitNew func(secretID uuid.UUID, n int) int

// EndUsers holds the end users the SDK endpoints saw until they are written
// (Run, Flush).
type EndUsers struct {
	store *store.Store
	log   *slog.Logger

	mu      sync.Mutex
	pending map[endUserKey]*seenUser
	bytes   int
	dropped int64
	// kick asks Run to write before the tick: a batch is pending.
	kick chan struct{}
	// writing serialises writes, so rows are never written out of order.
	writing sync.Mutex
	// limitNew, when set, bounds the new end users each secret adds.
	limitNew LimitNew
}

// LimitNewPerSecret bounds, from the next write on, the end users each
// secret adds: client secrets are in every browser, so without it one
// secret could fill its environment with made-up users. Pending keys are
// checked against the database when written (UnknownEndUsers); those the
// secret may not add are dropped; known ones are never held back.
func (b *EndUsers) LimitNewPerSecret(limit LimitNew) {
	b.writing.Lock()
	defer b.writing.Unlock()
	b.limitNew = limit
}

// NewEndUsers returns an empty buffer that writes to st.
func NewEndUsers(st *store.Store, log *slog.Logger) *EndUsers {
	return &EndUsers{store: st, log: log, pending: map[endUserKey]*seenUser{}, kick: make(chan struct{}, 1)}
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

// Saw notes that SDKs of an environment evaluated for these users at at.
// It never waits for the database; users store.CheckEndUser refuses are
// skipped.
func (b *EndUsers) Saw(envID uuid.UUID, users []eval.EndUser, at time.Time) {
	b.SawVia(envID, uuid.Nil, users, at)
}

// SawVia is Saw for users a secret reported: the new ones among them count
// against the secret's limit when written (LimitNewPerSecret).
func (b *EndUsers) SawVia(envID, secretID uuid.UUID, users []eval.EndUser, at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, u := range users {
		if sdkdata.CheckEndUser(u) != nil {
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
		b.pending[k] = &seenUser{name: u.Name, props: u.CustomizedProperties, first: at, last: at, size: size, via: secretID}
		b.bytes += size
	}
	if len(b.pending) >= sdkdata.EndUserBatch {
		select {
		case b.kick <- struct{}{}:
		default:
		}
	}
}

// Run writes the seen end users every EndUserFlushEvery, or sooner when a
// batch is pending, until ctx ends. The last write is the caller's: Flush
// after the SDK endpoints stopped taking requests.
func (b *EndUsers) Run(ctx context.Context) {
	flushLoop(ctx, EndUserFlushEvery, b.kick, b.Flush, b.log, "end users")
}

// Flush writes every pending end user now (store.WriteEndUsers). A batch
// the database refuses is dropped (and the error returned).
func (b *EndUsers) Flush(ctx context.Context) error {
	b.writing.Lock()
	defer b.writing.Unlock()
	b.mu.Lock()
	pending, dropped := b.pending, b.dropped
	b.pending, b.bytes, b.dropped = map[endUserKey]*seenUser{}, 0, 0
	b.mu.Unlock()
	if dropped > 0 {
		b.log.WarnContext(ctx, "end users dropped: the buffer was full", "count", dropped)
	}
	users := make([]sdkdata.SeenEndUser, 0, len(pending))
	via := make([]uuid.UUID, 0, len(pending))
	for k, u := range pending {
		users = append(users, sdkdata.SeenEndUser{EnvID: k.env, KeyID: k.key, Name: u.name, Properties: u.props,
			FirstSeen: u.first, LastSeen: u.last})
		via = append(via, u.via)
	}
	users, err := b.limitNewUsers(ctx, users, via)
	if err != nil {
		return err
	}
	return b.store.SDK().WriteEndUsers(ctx, users)
}

// limitNewUsers drops the new end users (unknown to the database) past
// their secret's limit, the latest first seen first; users no secret
// reported, and known ones, always pass. Without a limit it changes nothing.
func (b *EndUsers) limitNewUsers(ctx context.Context, users []sdkdata.SeenEndUser, via []uuid.UUID) ([]sdkdata.SeenEndUser, error) {
	if b.limitNew == nil {
		return users, nil
	}
	var idx []int // the users a secret reported: only they may be held back
	for i := range users {
		if via[i] != uuid.Nil {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return users, nil
	}
	asked := make([]sdkdata.SeenEndUser, len(idx))
	for j, i := range idx {
		asked[j] = users[i]
	}
	unknown, err := b.store.SDK().UnknownEndUsers(ctx, asked)
	if err != nil {
		return nil, err // the buffer is already empty: they are lost, as a batch the database refuses
	}
	bySecret := map[uuid.UUID][]int{}
	for j, i := range idx {
		if unknown[j] {
			bySecret[via[i]] = append(bySecret[via[i]], i)
		}
	}
	drop := make([]bool, len(users))
	for secret, news := range bySecret {
		granted := b.limitNew(secret, len(news))
		if granted >= len(news) {
			continue
		}
		slices.SortFunc(news, func(x, y int) int { return users[x].FirstSeen.Compare(users[y].FirstSeen) })
		for _, i := range news[granted:] {
			drop[i] = true
		}
	}
	kept := users[:0]
	for i, u := range users {
		if !drop[i] {
			kept = append(kept, u)
		}
	}
	return kept, nil
}
