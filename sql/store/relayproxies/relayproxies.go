// Package relayproxies is the store's seam of relay proxies: a key that lets
// a relay (FeatBit's agent, or `bunting relay`) read the secrets, flags and
// segments of some environments of an organization and serve SDKs beside
// the applications. It holds who may manage them (ListRelayProxies and
// ManageRelayProxies on relay-proxy/*, and CanAccessEnv on every
// environment a key reaches, since the key hands out their secrets), the
// key (shown once, kept hashed), the manual and auto agents, and what the
// agent protocol asks of the database: the key looked up, an agent
// registered under the licence quota, its status kept.
//
// It stands on the core only; what a relay is sent is built by web/sdk,
// which reads the environments' flags and segments through its own cache.
package relayproxies

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// RelayProxies is the relay proxies seam over the core.
type RelayProxies struct{ core *core.Core }

// New returns the seam over c.
func New(c *core.Core) *RelayProxies { return &RelayProxies{core: c} }

// Agent is a manual agent, FeatBit's Agent: one the server pushes data to
// (PUT .../sync), at its host.
type Agent struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	Host        string     `json:"host"`
	SyncAt      *time.Time `json:"syncAt"`
	Serves      string     `json:"serves"`
	DataVersion int64      `json:"dataVersion"`
	CreatedAt   *time.Time `json:"createdAt"`
}

// AutoAgent is an agent that registered itself with the key; Status is
// the JSON text of its last report ("{}" until it reports).
type AutoAgent struct {
	ID           string    `json:"id"`
	Status       string    `json:"status"`
	RegisteredAt time.Time `json:"registeredAt"`
}

// RelayProxy is FeatBit's RelayProxy entity: what creating one answers,
// with the key itself, the only time it is shown.
type RelayProxy struct {
	ID             uuid.UUID   `json:"id"`
	CreatedAt      time.Time   `json:"createdAt"`
	UpdatedAt      time.Time   `json:"updatedAt"`
	OrganizationID uuid.UUID   `json:"organizationId"`
	Name           string      `json:"name"`
	Key            string      `json:"key"`
	Description    string      `json:"description"`
	IsAllEnvs      bool        `json:"isAllEnvs"`
	Scopes         []string    `json:"scopes"`
	Agents         []Agent     `json:"agents"`
	AutoAgents     []AutoAgent `json:"autoAgents"`
}

// Item is FeatBit's RelayProxyVm: a relay proxy as lists show it, its key
// masked, what it serves named.
type Item struct {
	ID          uuid.UUID `json:"id"`
	Name        string    `json:"name"`
	Key         string    `json:"key"`
	Description string    `json:"description"`
	IsAllEnvs   bool      `json:"isAllEnvs"`
	Scopes      []string  `json:"scopes"`
	// Serves is "{envId},{projectName}/{envName}" for each scope, as
	// FeatBit's UI splits it (empty for every environment with no scopes).
	Serves     []string    `json:"serves"`
	Agents     []Agent     `json:"agents"`
	AutoAgents []AutoAgent `json:"autoAgents"`
	UpdatedAt  time.Time   `json:"updatedAt"`
	CreatedAt  time.Time   `json:"-"`
}

// Input is a relay proxy's editable fields. AutoAgents, on an update, are
// the auto agents kept: the others are removed (FeatBit's UI removes one by
// leaving it out); an agent is added only by registering.
type Input struct {
	Name        string      `json:"name"`
	Description string      `json:"description"`
	IsAllEnvs   bool        `json:"isAllEnvs"`
	Scopes      []string    `json:"scopes"`
	Agents      []Agent     `json:"agents"`
	AutoAgents  []AutoAgent `json:"autoAgents"`
}

// Filter selects a page of relay proxies by part of their name.
type Filter struct {
	Name string
	Page core.Page
}

// Limits of what a relay proxy holds.
const (
	MaxAgents    = 100
	maxHostLen   = 2048
	maxStatusLen = 4096
	maxAgentID   = 128
	keyPrefixLen = 15
	keyMask      = "**************"
)

// ErrInconsistent is FeatBit's answer to a sync of an agent the relay
// proxy does not list.
var ErrInconsistent = &core.RuleError{Code: "Inconsistent relay proxy data"}

// ErrQuota refuses an agent's registration past the licence quota.
var ErrQuota = errors.New("relay proxies: auto agent quota reached")

// Rights tells what a person may do with the organization's relay proxies.
type Rights struct {
	List   bool
	Manage bool
}

// RightsOf answers the pages which controls to offer.
func RightsOf(a *core.Actor) Rights {
	return Rights{List: a.Can(access.ListRelayProxies, core.RelayProxyRN),
		Manage: a.Can(access.ManageRelayProxies, core.RelayProxyRN)}
}

func mayList(a *core.Actor) error   { return a.Require(access.ListRelayProxies, core.RelayProxyRN) }
func mayManage(a *core.Actor) error { return a.Require(access.ManageRelayProxies, core.RelayProxyRN) }

// AuthorizeManage checks that the actor may manage relay proxies: what the
// agent availability check needs before it calls out.
func (s *RelayProxies) AuthorizeManage(a *core.Actor) error {
	if _, err := a.Org(); err != nil {
		return err
	}
	return mayManage(a)
}

// CheckAgentHost validates an agent's address as FeatBit does (http or
// https), for the availability check.
func CheckAgentHost(host string) error {
	var v core.Validator
	checkHost(&v, "agentHost", host)
	return v.Err()
}

func checkHost(v *core.Validator, field, host string) {
	switch {
	case strings.TrimSpace(host) == "":
		v.Add(field, "required")
	case len(host) > maxHostLen || !(strings.HasPrefix(host, "http://") || strings.HasPrefix(host, "https://")):
		v.Add(field, "invalid")
	}
}

// NewKey returns a relay proxy key as FeatBit makes them: "rp-", 18
// characters from the time (base64 of the reversed Unix milliseconds) and
// 22 of a random uuid.
func NewKey(now time.Time) string {
	ms := []byte(strconv.FormatInt(now.UnixMilli(), 10))
	slices.Reverse(ms)
	stamp := strings.TrimRight(base64.StdEncoding.EncodeToString(ms), "=")
	return "rp-" + stamp + core.NewSecretValue(uuid.New())[:22]
}

// HashKey is what a key is looked up by.
func HashKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// MaskKey is a key as lists show it: its first 15 characters, then FeatBit's mask.
func MaskKey(prefix string) string { return prefix + keyMask }

// orgEnv is an environment of the organization a scope may name.
type orgEnv = db.RelayProxyEnvironmentsRow

func (s *RelayProxies) envs(ctx context.Context, q *db.Queries, orgID uuid.UUID, all bool, scopes []uuid.UUID) ([]orgEnv, error) {
	rows, err := q.RelayProxyEnvironments(ctx, db.RelayProxyEnvironmentsParams{OrganizationID: orgID, AllEnvs: all,
		Scopes: core.OrEmpty(scopes)})
	return rows, core.Translate(err)
}

// check validates an input against the organization's environments and
// returns its scopes; v collects every problem. A scope in kept (the
// relay proxy's stored scopes) whose environment was deleted since is
// dropped, not refused: the page and FeatBit's UI send back what they
// were shown.
func check(v *core.Validator, in *Input, envs map[uuid.UUID]orgEnv, kept []uuid.UUID) []uuid.UUID {
	in.Name = strings.TrimSpace(in.Name)
	v.Required("name", in.Name, core.MaxNameLen)
	v.Text("description", in.Description, core.MaxDescriptionLen)
	var scopes []uuid.UUID
	if !in.IsAllEnvs {
		bad := false
		for _, sc := range in.Scopes {
			id, err := uuid.Parse(sc)
			if _, ok := envs[id]; err == nil && !ok && slices.Contains(kept, id) {
				continue
			}
			if _, ok := envs[id]; err != nil || !ok {
				bad = true
				break
			}
			if !slices.Contains(scopes, id) {
				scopes = append(scopes, id)
			}
		}
		// Every relay proxy serves something: none chosen is as wrong as
		// one that is not the organization's.
		if bad || len(scopes) == 0 {
			v.Add("scopes", "invalid")
		}
	}
	if len(in.Agents) > MaxAgents {
		v.Add("agents", "invalid")
	}
	ids := map[string]bool{}
	for _, ag := range in.Agents {
		var av core.Validator
		av.Required("id", ag.ID, maxAgentID)
		av.Required("name", ag.Name, core.MaxNameLen)
		checkHost(&av, "host", ag.Host)
		if av.Err() != nil || ids[ag.ID] {
			v.Add("agents", "invalid")
			break
		}
		ids[ag.ID] = true
	}
	return scopes
}

// requireEnvs checks that the actor may read every environment a key
// would reach: the key hands out their secrets.
func requireEnvs(a *core.Actor, all bool, envs []orgEnv) error {
	if all {
		return a.Require(access.CanAccessEnv, core.EnvRN("*", "*"))
	}
	for _, e := range envs {
		if err := a.Require(access.CanAccessEnv, core.EnvRN(e.ProjectKey, e.EnvKey)); err != nil {
			return err
		}
	}
	return nil
}

func byID(rows []orgEnv) map[uuid.UUID]orgEnv {
	m := make(map[uuid.UUID]orgEnv, len(rows))
	for _, r := range rows {
		m[r.EnvID] = r
	}
	return m
}

func scopeStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

func agentsOf(raw json.RawMessage) []Agent {
	var out []Agent
	if json.Unmarshal(raw, &out) != nil {
		return []Agent{}
	}
	return core.OrEmpty(out)
}

// item is a row as lists show it.
func item(r db.RelayProxy, auto []AutoAgent, envs map[uuid.UUID]orgEnv) Item {
	serves := []string{}
	for _, id := range r.Scopes {
		if e, ok := envs[id]; ok {
			serves = append(serves, id.String()+","+e.ProjectName+"/"+e.EnvName)
		}
	}
	return Item{ID: r.ID, Name: r.Name, Key: MaskKey(r.KeyPrefix), Description: r.Description, IsAllEnvs: r.IsAllEnvs,
		Scopes: scopeStrings(r.Scopes), Serves: serves, Agents: agentsOf(r.Agents), AutoAgents: core.OrEmpty(auto),
		UpdatedAt: r.UpdatedAt, CreatedAt: r.CreatedAt}
}

// changed is the event that tells connected relays of a change of theirs.
func changed(id, orgID uuid.UUID) *feed.Event {
	return &feed.Event{Kind: feed.EventRelayProxy, ID: id, OrgID: orgID}
}

// AuthorizeList checks that the actor may see relay proxies: what the
// pages that only show them need.
func (s *RelayProxies) AuthorizeList(a *core.Actor) error {
	if _, err := a.Org(); err != nil {
		return err
	}
	return mayList(a)
}

// Status is what an auto agent reports of itself (FeatBit's agent status):
// what it serves ("project:env,…"), its data version (the newest change's
// Unix milliseconds), its sync state (None, Starting, Stable, Interrupted,
// Stopped), its last sync and when it reported.
type Status struct {
	Serves       string     `json:"serves"`
	DataVersion  int64      `json:"dataVersion"`
	SyncState    string     `json:"syncState"`
	LastSyncedAt *time.Time `json:"lastSyncedAt"`
	ReportedAt   *time.Time `json:"reportedAt"`
}

// ParseStatus reads an auto agent's status; what does not read is empty.
// .NET writes times without a zone when it does not know theirs: those
// are read as UTC, as the agent reports in UTC.
func ParseStatus(text string) Status {
	var raw struct {
		Serves       string `json:"serves"`
		DataVersion  int64  `json:"dataVersion"`
		SyncState    string `json:"syncState"`
		LastSyncedAt string `json:"lastSyncedAt"`
		ReportedAt   string `json:"reportedAt"`
	}
	if json.Unmarshal([]byte(text), &raw) != nil {
		return Status{}
	}
	return Status{Serves: raw.Serves, DataVersion: raw.DataVersion, SyncState: raw.SyncState,
		LastSyncedAt: agentTime(raw.LastSyncedAt), ReportedAt: agentTime(raw.ReportedAt)}
}

func agentTime(s string) *time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.9999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return &t
		}
	}
	return nil
}
