package sdk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"
	"golang.org/x/sync/singleflight"

	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
)

// snapshot is an environment's flags and segments as SDKs see them. It is
// never changed once built; a change makes a new one.
type snapshot struct {
	keys     []string // flag keys, sorted
	flags    map[string]*flagstore.Flag
	byID     map[uuid.UUID]*flagstore.Flag
	segments map[uuid.UUID]*flagstore.Segment
	// ver is the newest item's version: what an SDK holding the whole
	// snapshot reports as its timestamp.
	ver int64

	// full is the server SDKs' full data-sync, made on first use: every
	// server SDK that syncs gets the same bytes until a change makes a new
	// snapshot.
	fullOnce sync.Once
	full     encodedMessage

	// compiledFlags and preparedSegments are filled on first use by
	// OFREP and client evaluations (ofrep_encode.go).
	compiledFlags, preparedSegments sync.Map
}

// encodedMessage is a message's bytes and the same framed for WebSockets.
type encodedMessage struct {
	bytes    []byte
	prepared *websocket.PreparedMessage
}

// serverFull is the server SDKs' full data-sync message of the snapshot.
func (s *snapshot) serverFull() encodedMessage {
	s.fullOnce.Do(func() {
		b := encode("data-sync", serverData(s, eventFull, 0))
		s.full = encodedMessage{bytes: b, prepared: prepare(b)}
	})
	return s.full
}

func newSnapshot(d sdkdata.EnvData) *snapshot {
	s := &snapshot{flags: make(map[string]*flagstore.Flag, len(d.Flags)), byID: make(map[uuid.UUID]*flagstore.Flag, len(d.Flags)),
		segments: make(map[uuid.UUID]*flagstore.Segment, len(d.Segments))}
	for i := range d.Flags {
		s.putFlag(&d.Flags[i])
	}
	for i := range d.Segments {
		s.segments[d.Segments[i].ID] = &d.Segments[i]
	}
	s.finish()
	return s
}

func (s *snapshot) putFlag(f *flagstore.Flag) {
	s.flags[f.Key] = f
	s.byID[f.ID] = f
}

// finish orders the keys and finds the version, once the maps are filled.
func (s *snapshot) finish() {
	s.keys, s.ver = s.keys[:0], 0
	for k, f := range s.flags {
		s.keys = append(s.keys, k)
		s.ver = max(s.ver, version(f.UpdatedAt))
	}
	for _, sg := range s.segments {
		s.ver = max(s.ver, version(sg.UpdatedAt))
	}
	slices.Sort(s.keys)
}

// sortedSegments returns the segments in id order.
func (s *snapshot) sortedSegments() []*flagstore.Segment {
	out := make([]*flagstore.Segment, 0, len(s.segments))
	for _, sg := range s.segments {
		out = append(out, sg)
	}
	slices.SortFunc(out, func(a, b *flagstore.Segment) int { return strings.Compare(a.ID.String(), b.ID.String()) })
	return out
}

// each calls fn for every flag in key order.
func (s *snapshot) each(fn func(*flagstore.Flag)) {
	for _, k := range s.keys {
		fn(s.flags[k])
	}
}

// patched returns a copy with some flags and segments replaced or, when
// missing from the maps given (nil values), removed.
func (s *snapshot) patched(flags map[uuid.UUID]*flagstore.Flag, segments map[uuid.UUID]*flagstore.Segment) *snapshot {
	c := &snapshot{flags: make(map[string]*flagstore.Flag, len(s.flags)), byID: make(map[uuid.UUID]*flagstore.Flag, len(s.byID)),
		segments: make(map[uuid.UUID]*flagstore.Segment, len(s.segments))}
	for id, f := range s.byID {
		if _, changed := flags[id]; !changed {
			c.putFlag(f)
		}
	}
	for _, f := range flags {
		if f != nil {
			c.putFlag(f)
		}
	}
	for id, sg := range s.segments {
		c.segments[id] = sg
	}
	for id, sg := range segments {
		if sg == nil {
			delete(c.segments, id)
		} else {
			c.segments[id] = sg
		}
	}
	c.finish()
	return c
}

// Cache limits.
const (
	maxCachedEnvs = 256
	// maxDirty is how many changed items a cached snapshot is patched with
	// one by one; beyond it the environment is read again whole.
	maxDirty    = 200
	loadTimeout = 30 * time.Second
)

// cache keeps recent environments' snapshots while change notifications
// are live, so SDK requests evaluate from memory. A change to a flag or a
// segment marks it dirty, and the next reader patches the snapshot with a
// fresh read of just that item; other changes drop the snapshot.
type cache struct {
	src  Source
	sub  *feed.Subscription
	load singleflight.Group

	mu      sync.Mutex
	entries map[uuid.UUID]*cacheEntry
	seq     uint64               // counts events, to tell a read from before one from a read after
	envSeq  map[uuid.UUID]uint64 // the last event about an environment
	orgSeq  map[uuid.UUID]uint64 // the last event about every environment of an organization
	resetAt uint64               // the last reset
	secrets map[string]sdkdata.SDKEnv
}

type cacheEntry struct {
	env      sdkdata.SDKEnv
	snap     *snapshot
	used     time.Time
	dirtyF   map[uuid.UUID]uint64 // flag id → event seq
	dirtySeg map[uuid.UUID]uint64
}

func newCache(s Source) *cache {
	return &cache{src: s, sub: s.Changes().Subscribe(), entries: map[uuid.UUID]*cacheEntry{},
		envSeq: map[uuid.UUID]uint64{}, orgSeq: map[uuid.UUID]uint64{}, secrets: map[string]sdkdata.SDKEnv{}}
}

// apply takes the waiting events; c.mu is held.
func (c *cache) apply() {
	for _, ev := range c.sub.Take() {
		c.seq++
		if ev.Kind == feed.EventReset {
			c.entries, c.resetAt, c.secrets = map[uuid.UUID]*cacheEntry{}, c.seq, map[string]sdkdata.SDKEnv{}
			continue
		}
		if ev.Kind == feed.EventEnv {
			for secret, env := range c.secrets {
				if ev.Affects(env.OrgID, env.EnvID) {
					delete(c.secrets, secret)
				}
			}
		}
		if ev.AllEnvs {
			c.orgSeq[ev.OrgID] = c.seq
		}
		for _, id := range ev.EnvIDs {
			c.envSeq[id] = c.seq // a whole read in progress may have missed it
		}
		for id, e := range c.entries {
			if !ev.Affects(e.env.OrgID, id) {
				continue
			}
			switch ev.Kind {
			case feed.EventFlag:
				e.dirtyF[ev.ID] = c.seq
			case feed.EventSegment:
				e.dirtySeg[ev.ID] = c.seq
			default:
				delete(c.entries, id)
			}
			if len(e.dirtyF)+len(e.dirtySeg) > maxDirty {
				delete(c.entries, id)
				c.envSeq[id] = c.seq
			}
		}
	}
}

// get returns an environment's current snapshot.
func (c *cache) get(ctx context.Context, env sdkdata.SDKEnv) (*snapshot, error) {
	c.mu.Lock()
	c.apply()
	e := c.entries[env.EnvID]
	if e != nil && len(e.dirtyF)+len(e.dirtySeg) == 0 {
		e.used = time.Now()
		snap := e.snap // read under the lock: a patch replaces it under the lock
		c.mu.Unlock()
		return snap, nil
	}
	if e != nil {
		c.mu.Unlock()
		return c.patch(ctx, e)
	}
	seen := c.seq
	c.mu.Unlock()

	type loaded struct {
		snap    *snapshot
		started uint64 // the last event seen before the read began
		live    bool
	}
	// Readers share a read only if it began after every event they have
	// seen: one reacting to a change must not get data from before it.
	v, err, _ := c.load.Do(fmt.Sprint(env.EnvID, seen), func() (any, error) {
		l := loaded{started: seen, live: c.src.Changes().Live()}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
		defer cancel()
		d, err := c.src.SDKData(ctx, env)
		if err != nil {
			return nil, err
		}
		l.snap = newSnapshot(d)
		return l, nil
	})
	if err != nil {
		return nil, err
	}
	l := v.(loaded)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.apply()
	// Keep it only if no event since the read began could have made it
	// stale, and only while events are arriving at all.
	stale := c.resetAt > l.started || c.envSeq[env.EnvID] > l.started || c.orgSeq[env.OrgID] > l.started
	if l.live && c.src.Changes().Live() && !stale && c.entries[env.EnvID] == nil {
		c.evict()
		c.entries[env.EnvID] = &cacheEntry{env: env, snap: l.snap, used: time.Now(),
			dirtyF: map[uuid.UUID]uint64{}, dirtySeg: map[uuid.UUID]uint64{}}
	}
	return l.snap, nil
}

// maxCachedSecrets bounds the secrets remembered; past it they are forgotten.
const maxCachedSecrets = 10_000

// knownSecret returns a remembered secret's environment, without reading.
func (c *cache) knownSecret(secret string) (sdkdata.SDKEnv, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.apply()
	env, ok := c.secrets[secret]
	return env, ok
}

// secretEnv finds the environment of a secret, remembering secrets that
// exist while events are live (removing a secret sends an EventEnv).
func (c *cache) secretEnv(ctx context.Context, secret string) (sdkdata.SDKEnv, error) {
	c.mu.Lock()
	c.apply()
	env, ok := c.secrets[secret]
	seen := c.seq
	c.mu.Unlock()
	if ok {
		return env, nil
	}
	live := c.src.Changes().Live()
	env, err := c.src.SDKEnvBySecret(ctx, secret)
	if err != nil {
		return env, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.apply()
	if live && c.src.Changes().Live() && c.resetAt <= seen && c.envSeq[env.EnvID] <= seen {
		if len(c.secrets) >= maxCachedSecrets {
			c.secrets = map[string]sdkdata.SDKEnv{}
		}
		c.secrets[secret] = env
	}
	return env, nil
}

// patch reads an entry's dirty items again and stores the patched snapshot.
func (c *cache) patch(ctx context.Context, e *cacheEntry) (*snapshot, error) {
	c.mu.Lock()
	flags, segments := make(map[uuid.UUID]uint64, len(e.dirtyF)), make(map[uuid.UUID]uint64, len(e.dirtySeg))
	for id, seq := range e.dirtyF {
		flags[id] = seq
	}
	for id, seq := range e.dirtySeg {
		segments[id] = seq
	}
	base := e.snap
	c.mu.Unlock()

	fresh := map[uuid.UUID]*flagstore.Flag{}
	for id := range flags {
		f, err := c.src.SDKFlag(ctx, e.env, id)
		switch {
		case err == nil:
			fresh[id] = &f
		case isNotFound(err):
			fresh[id] = nil
		default:
			return nil, err
		}
	}
	freshSeg := map[uuid.UUID]*flagstore.Segment{}
	for id := range segments {
		sg, err := c.src.SDKSegment(ctx, e.env, id)
		switch {
		case err == nil:
			freshSeg[id] = &sg
		case isNotFound(err):
			freshSeg[id] = nil
		default:
			return nil, err
		}
	}
	snap := base.patched(fresh, freshSeg)

	c.mu.Lock()
	defer c.mu.Unlock()
	c.apply()
	if c.entries[e.env.EnvID] == e && e.snap == base {
		e.snap, e.used = snap, time.Now()
		for id, seq := range flags {
			if e.dirtyF[id] == seq { // not changed again since it was read
				delete(e.dirtyF, id)
			}
		}
		for id, seq := range segments {
			if e.dirtySeg[id] == seq {
				delete(e.dirtySeg, id)
			}
		}
	}
	return snap, nil
}

// evict drops the least recently used entries beyond the limit; c.mu is held.
func (c *cache) evict() {
	for len(c.entries) >= maxCachedEnvs {
		var oldest uuid.UUID
		var at time.Time
		for id, e := range c.entries {
			if at.IsZero() || e.used.Before(at) {
				oldest, at = id, e.used
			}
		}
		delete(c.entries, oldest)
	}
}

func isNotFound(err error) bool { return errors.Is(err, core.ErrNotFound) }
