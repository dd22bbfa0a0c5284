// Package relay is `bunting relay`: a process with no database that holds
// SDK connections at the edge, as FeatBit's agent does. It keeps every
// environment of its relay proxy's scope in memory, synced from a Bunting
// (or FeatBit) upstream over the agent protocol, and serves SDKs through
// web/sdk's endpoints over that memory (Memory is their Source), evaluated
// by the server's own evaluator.
package relay

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
)

// Secret is an environment secret as the agent protocol carries it.
type Secret struct {
	Type       string    `json:"type"`
	ProjectKey string    `json:"projectKey"`
	EnvID      uuid.UUID `json:"envId"`
	EnvKey     string    `json:"envKey"`
	Value      string    `json:"value"`
}

// Item is one environment of an rp_full or rp_patch data set.
type Item struct {
	EnvID        uuid.UUID           `json:"envId"`
	Secrets      []Secret            `json:"secrets"`
	FeatureFlags []flagstore.Flag    `json:"featureFlags"`
	Segments     []flagstore.Segment `json:"segments"`
}

// DataSet is an rp_full (everything: replaces what is held) or rp_patch
// (items changed since the versions sent: merged into it).
type DataSet struct {
	EventType string `json:"eventType"`
	Items     []Item `json:"items"`
}

// Data-set event types of the agent protocol.
const (
	eventFull  = "rp_full"
	eventPatch = "rp_patch"
)

// relayOrg stands for the organization of every environment the relay
// holds: the protocol does not name it, and the relay's connection caps are
// its own, not an organization's share of a server's.
var relayOrg = uuid.MustParse("00000000-0000-4000-8000-00000000be1a")

// secretIDs names secrets by a hash of their value, since the protocol
// carries no id: the same secret gets the same id in every relay and run.
var secretIDs = uuid.MustParse("6f0e1c4a-5d2b-4c8e-9a7f-3b1d2e4f5a6b")

type envData struct {
	secrets  []Secret
	flags    map[uuid.UUID]flagstore.Flag
	segments map[uuid.UUID]flagstore.Segment
}

// Memory is the relay's data: every environment of its scope, with its
// secrets, flags and segments. It is web/sdk's Source in the relay, and
// announces what each update changes through its own feed.Notifier, so the
// SDK endpoints push changes just as they do in the server.
type Memory struct {
	changes *feed.Notifier
	now     func() time.Time

	mu      sync.RWMutex
	envs    map[uuid.UUID]*envData
	secrets map[string]sdkdata.SDKEnv
	loaded  bool // holds a data set (from the upstream, a snapshot or a bootstrap)
	// saved is told after every change, for the snapshot file.
	saved func()
}

// NewMemory returns an empty memory.
func NewMemory() *Memory {
	n := feed.NewNotifier()
	n.SetLive(true) // every change reaches it through Apply
	return &Memory{changes: n, now: time.Now, envs: map[uuid.UUID]*envData{}, secrets: map[string]sdkdata.SDKEnv{}}
}

// Loaded reports whether the memory holds a data set yet.
func (m *Memory) Loaded() bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.loaded
}

// Apply merges a data set: rp_full replaces everything (environments,
// secrets, flags and segments missing from it are gone), rp_patch and the
// server SDKs' patch upsert items by id, keeping the newer updatedAt. Each
// flag, segment and environment whose secrets changed is announced.
func (m *Memory) Apply(ds DataSet) {
	full := ds.EventType == eventFull
	var events []feed.Event
	at := m.now()
	m.mu.Lock()
	if full {
		keep := map[uuid.UUID]bool{}
		for _, it := range ds.Items {
			keep[it.EnvID] = true
		}
		for id, e := range m.envs {
			if keep[id] {
				continue
			}
			events = append(events, feed.Event{Kind: feed.EventEnv, OrgID: relayOrg, EnvIDs: []uuid.UUID{id}, At: at})
			for fid := range e.flags {
				events = append(events, flagEvent(feed.EventFlag, fid, id, at))
			}
			delete(m.envs, id)
		}
	}
	for _, it := range ds.Items {
		events = append(events, m.applyItem(it, full, at)...)
	}
	if full || len(ds.Items) > 0 {
		m.loaded = true
	}
	m.indexSecrets()
	saved := m.saved
	m.mu.Unlock()
	// Published after the lock: a subscriber that takes an event reads the
	// memory, which must hold the change.
	for _, ev := range events {
		m.changes.Publish(ev)
	}
	if saved != nil {
		saved()
	}
}

func flagEvent(kind string, id, env uuid.UUID, at time.Time) feed.Event {
	return feed.Event{Kind: kind, ID: id, OrgID: relayOrg, EnvIDs: []uuid.UUID{env}, At: at}
}

// applyItem merges one environment; m.mu is held.
func (m *Memory) applyItem(it Item, full bool, at time.Time) []feed.Event {
	var events []feed.Event
	e := m.envs[it.EnvID]
	if e == nil {
		e = &envData{flags: map[uuid.UUID]flagstore.Flag{}, segments: map[uuid.UUID]flagstore.Segment{}}
		m.envs[it.EnvID] = e
	}
	// A patch carries no secrets ([]): they change only with a full set.
	if full || len(it.Secrets) > 0 {
		if !sameSecrets(e.secrets, it.Secrets) {
			events = append(events, feed.Event{Kind: feed.EventEnv, OrgID: relayOrg, EnvIDs: []uuid.UUID{it.EnvID}, At: at})
		}
		e.secrets = slices.Clone(it.Secrets)
	}
	seenF, seenS := map[uuid.UUID]bool{}, map[uuid.UUID]bool{}
	for _, f := range it.FeatureFlags {
		f.EnvID = it.EnvID
		seenF[f.ID] = true
		if old, ok := e.flags[f.ID]; ok && stale(f.UpdatedAt, old.UpdatedAt, full) {
			continue
		}
		e.flags[f.ID] = f
		events = append(events, flagEvent(feed.EventFlag, f.ID, it.EnvID, at))
	}
	for _, sg := range it.Segments {
		sg.EnvID = it.EnvID
		seenS[sg.ID] = true
		if old, ok := e.segments[sg.ID]; ok && stale(sg.UpdatedAt, old.UpdatedAt, full) {
			continue
		}
		e.segments[sg.ID] = sg
		events = append(events, flagEvent(feed.EventSegment, sg.ID, it.EnvID, at))
	}
	if full {
		for id := range e.flags {
			if !seenF[id] {
				delete(e.flags, id)
				events = append(events, flagEvent(feed.EventFlag, id, it.EnvID, at))
			}
		}
		for id := range e.segments {
			if !seenS[id] {
				delete(e.segments, id)
				events = append(events, flagEvent(feed.EventSegment, id, it.EnvID, at))
			}
		}
	}
	return events
}

// stale reports whether an item's version leaves the one held: a patch
// keeps the newer (SDKs version items by updatedAt, so an older one arriving
// late must not win), a full set replaces whatever differs.
func stale(got, held time.Time, full bool) bool {
	if full {
		return got.Equal(held)
	}
	return !got.After(held)
}

func sameSecrets(a, b []Secret) bool {
	key := func(s []Secret) []string {
		out := make([]string, len(s))
		for i, x := range s {
			out[i] = x.Type + "\x00" + x.Value
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(a), key(b))
}

// indexSecrets rebuilds the secret index; m.mu is held.
func (m *Memory) indexSecrets() {
	idx := make(map[string]sdkdata.SDKEnv, len(m.secrets))
	for envID, e := range m.envs {
		for _, s := range e.secrets {
			idx[s.Value] = sdkdata.SDKEnv{EnvID: envID, OrgID: relayOrg, SecretType: s.Type,
				SecretID: uuid.NewSHA1(secretIDs, []byte(s.Value))}
		}
	}
	m.secrets = idx
}

// Changes announces what Apply changed.
func (m *Memory) Changes() *feed.Notifier { return m.changes }

// SDKEnvBySecret finds the environment a synced secret opens.
func (m *Memory) SDKEnvBySecret(_ context.Context, secret string) (sdkdata.SDKEnv, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	env, ok := m.secrets[secret]
	if !ok {
		return sdkdata.SDKEnv{}, core.ErrUnauthenticated
	}
	return env, nil
}

// SDKData is an environment's flags (by key) and segments.
func (m *Memory) SDKData(_ context.Context, env sdkdata.SDKEnv) (sdkdata.EnvData, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e := m.envs[env.EnvID]
	if e == nil {
		return sdkdata.EnvData{}, core.ErrNotFound
	}
	d := sdkdata.EnvData{Flags: make([]flagstore.Flag, 0, len(e.flags)), Segments: make([]flagstore.Segment, 0, len(e.segments))}
	for _, f := range e.flags {
		d.Flags = append(d.Flags, f)
	}
	sort.Slice(d.Flags, func(i, j int) bool { return d.Flags[i].Key < d.Flags[j].Key })
	for _, sg := range e.segments {
		d.Segments = append(d.Segments, sg)
	}
	return d, nil
}

// SDKFlag is one flag by id.
func (m *Memory) SDKFlag(_ context.Context, env sdkdata.SDKEnv, id uuid.UUID) (flagstore.Flag, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if e := m.envs[env.EnvID]; e != nil {
		if f, ok := e.flags[id]; ok {
			return f, nil
		}
	}
	return flagstore.Flag{}, core.ErrNotFound
}

// SDKSegment is one segment by id.
func (m *Memory) SDKSegment(_ context.Context, env sdkdata.SDKEnv, id uuid.UUID) (flagstore.Segment, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if e := m.envs[env.EnvID]; e != nil {
		if sg, ok := e.segments[id]; ok {
			return sg, nil
		}
	}
	return flagstore.Segment{}, core.ErrNotFound
}

// RecordEvaluations is never called in the relay: event reports are
// forwarded to the upstream whole (Forwarder), which counts them.
func (m *Memory) RecordEvaluations(context.Context, sdkdata.SDKEnv, []sdkdata.EvaluationCount, time.Time) error {
	return nil
}

// RecordSDKSeen does nothing: the upstream learns of the environment's SDKs
// from their event reports.
func (m *Memory) RecordSDKSeen(context.Context, sdkdata.SDKEnv, time.Time) error { return nil }

// Versions are what the relay holds: the newest updatedAt in milliseconds,
// overall and per environment, as the agent's data-sync request sends them.
func (m *Memory) Versions() (all int64, envs map[uuid.UUID]int64) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	envs = make(map[uuid.UUID]int64, len(m.envs))
	for id, e := range m.envs {
		var v int64
		for _, f := range e.flags {
			v = max(v, f.UpdatedAt.UnixMilli())
		}
		for _, sg := range e.segments {
			v = max(v, sg.UpdatedAt.UnixMilli())
		}
		envs[id] = v
		all = max(all, v)
	}
	return all, envs
}

// Serves names the environments held as FeatBit's agent reports them:
// "projectKey:envKey", comma-separated, in order.
func (m *Memory) Serves() string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []string
	for _, e := range m.envs {
		if len(e.secrets) > 0 {
			out = append(out, e.secrets[0].ProjectKey+":"+e.secrets[0].EnvKey)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// Backup is everything held as an rp_full data set: what
// /api/public/proxy/backup answers and the snapshot file keeps.
func (m *Memory) Backup() DataSet {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ds := DataSet{EventType: eventFull, Items: make([]Item, 0, len(m.envs))}
	for id, e := range m.envs {
		it := Item{EnvID: id, Secrets: core.OrEmpty(slices.Clone(e.secrets)),
			FeatureFlags: make([]flagstore.Flag, 0, len(e.flags)), Segments: make([]flagstore.Segment, 0, len(e.segments))}
		for _, f := range e.flags {
			it.FeatureFlags = append(it.FeatureFlags, f)
		}
		for _, sg := range e.segments {
			it.Segments = append(it.Segments, sg)
		}
		ds.Items = append(ds.Items, it)
	}
	slices.SortFunc(ds.Items, func(a, b Item) int { return strings.Compare(a.EnvID.String(), b.EnvID.String()) })
	return ds
}

// decodeDataSet reads an rp_full or rp_patch data set.
func decodeDataSet(raw []byte) (DataSet, error) {
	var ds DataSet
	err := json.Unmarshal(raw, &ds)
	return ds, err
}
