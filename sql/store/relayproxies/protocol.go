package relayproxies

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// What the agent protocol asks of the database: the key looked up, an
// agent registered, its status kept, and what a relay is sent named.

// Relay is what a key opens: the relay proxy, and the environments it
// serves with their secrets, read when a relay connects.
type Relay struct {
	ID          uuid.UUID
	OrgID       uuid.UUID
	WorkspaceID uuid.UUID
	// Version changes with every change of the relay proxy (its updatedAt):
	// a relay whose scope changed is sent everything again.
	Version time.Time
	Envs    []Env
}

// Env is an environment a relay serves, with its secrets.
type Env struct {
	EnvID       uuid.UUID
	ProjectKey  string
	ProjectName string
	EnvKey      string
	EnvName     string
	Secrets     []Secret
}

// Secret is FeatBit's secret as a relay receives it.
type Secret struct {
	Type       string    `json:"type"`
	ProjectKey string    `json:"projectKey"`
	EnvID      uuid.UUID `json:"envId"`
	EnvKey     string    `json:"envKey"`
	Value      string    `json:"value"`
}

// HasServerSecret reports whether the relay serves any environment with a
// server secret: FeatBit refuses a relay that serves none.
func (r Relay) HasServerSecret() bool {
	for _, e := range r.Envs {
		for _, s := range e.Secrets {
			if s.Type == core.SecretServer {
				return true
			}
		}
	}
	return false
}

// EnvIDs are the environments it serves.
func (r Relay) EnvIDs() []uuid.UUID {
	out := make([]uuid.UUID, len(r.Envs))
	for i, e := range r.Envs {
		out[i] = e.EnvID
	}
	return out
}

// maxKeyLen bounds what is hashed and looked up: FeatBit's keys are 43
// characters.
const maxKeyLen = 128

// RelayByKey finds what a relay proxy key opens. A key that is not one, or
// that no relay proxy has (never made, or deleted), is ErrUnauthenticated;
// ErrUnavailable means the database did not answer.
func (s *RelayProxies) RelayByKey(ctx context.Context, key string) (Relay, error) {
	if !strings.HasPrefix(key, "rp-") || len(key) > maxKeyLen {
		return Relay{}, core.ErrUnauthenticated
	}
	row, err := s.core.Q.RelayProxyByKeyHash(ctx, HashKey(key))
	if err = core.Translate(err); errors.Is(err, core.ErrNotFound) {
		return Relay{}, core.ErrUnauthenticated
	}
	if err != nil {
		return Relay{}, err
	}
	return s.relay(ctx, s.core.Q, row.RelayProxy, row.WorkspaceID)
}

func (s *RelayProxies) relay(ctx context.Context, q *db.Queries, r db.RelayProxy, ws uuid.UUID) (Relay, error) {
	envs, err := s.envs(ctx, q, r.OrganizationID, r.IsAllEnvs, r.Scopes)
	if err != nil {
		return Relay{}, err
	}
	out := Relay{ID: r.ID, OrgID: r.OrganizationID, WorkspaceID: ws, Version: r.UpdatedAt, Envs: make([]Env, len(envs))}
	ids := make([]uuid.UUID, len(envs))
	at := map[uuid.UUID]int{}
	for i, e := range envs {
		out.Envs[i] = Env{EnvID: e.EnvID, ProjectKey: e.ProjectKey, ProjectName: e.ProjectName, EnvKey: e.EnvKey, EnvName: e.EnvName,
			Secrets: []Secret{}}
		ids[i], at[e.EnvID] = e.EnvID, i
	}
	secrets, err := q.RelayProxySecrets(ctx, ids)
	if err != nil {
		return Relay{}, core.Translate(err)
	}
	for _, sc := range secrets {
		e := &out.Envs[at[sc.EnvID]]
		e.Secrets = append(e.Secrets, Secret{Type: sc.Type, ProjectKey: sc.ProjectKey, EnvID: sc.EnvID, EnvKey: sc.EnvKey, Value: sc.Value})
	}
	return out, nil
}

// maxAgentIDLen bounds an agent's id as it registers.
const maxAgentIDLen = maxAgentID

// RegisterAgent registers an auto agent under the key, as FeatBit's
// evaluation server does: a bad key is ErrUnauthenticated, and at the
// quota (auto agents of the whole workspace, counted before the agent is
// known, so a registered one is refused too) ErrQuota. Registering again
// changes nothing. The registration is audited as the relay proxy's.
func (s *RelayProxies) RegisterAgent(ctx context.Context, key, agentID string, quota int64) error {
	agentID = strings.TrimSpace(agentID)
	var v core.Validator
	if agentID == "" || !v.Text("agentId", agentID, maxAgentIDLen) {
		return core.Invalid("agentId_is_invalid")
	}
	if !strings.HasPrefix(key, "rp-") || len(key) > maxKeyLen {
		return core.ErrUnauthenticated
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		row, err := q.RelayProxyByKeyHash(ctx, HashKey(key))
		if err = core.Translate(err); errors.Is(err, core.ErrNotFound) {
			return core.ErrUnauthenticated
		}
		if err != nil {
			return err
		}
		r := row.RelayProxy
		// Registrations of one relay proxy wait for each other, so two
		// agents cannot both take the last place.
		if _, err := q.LockRelayProxy(ctx, db.LockRelayProxyParams{OrganizationID: r.OrganizationID, ID: r.ID}); err != nil {
			return err
		}
		used, err := q.CountWorkspaceAutoAgents(ctx, row.WorkspaceID)
		if err != nil {
			return err
		}
		if used >= quota {
			return ErrQuota
		}
		n, err := q.InsertRelayProxyAutoAgent(ctx, db.InsertRelayProxyAutoAgentParams{RelayProxyID: r.ID, ID: agentID})
		if err != nil || n == 0 {
			return err
		}
		a := relayActor(r, row.WorkspaceID)
		return s.core.Audit(ctx, q, a, core.Change{RefType: refType, RefID: r.ID.String(), Keyword: r.Name, Operation: core.OpUpdate,
			Comment: "auto agent " + agentID + " registered", Current: AutoAgent{ID: agentID, Status: "{}"}})
	})
}

// relayActor is the relay proxy acting through its key: the audit log
// names it as the system, as it does a trigger's calls.
func relayActor(r db.RelayProxy, ws uuid.UUID) *core.Actor {
	return &core.Actor{TriggerID: r.ID, WorkspaceID: ws, OrgID: r.OrganizationID}
}

// ReportStatus keeps the status an auto agent reports (FeatBit's
// rp-agent-status: a JSON object as text). An agent that is not
// registered, or removed, is not added back; a report is not a change
// anyone made, so it is not audited.
func (s *RelayProxies) ReportStatus(ctx context.Context, relayID uuid.UUID, agentID, status string) error {
	if len(status) > maxStatusLen || !json.Valid([]byte(status)) || !strings.HasPrefix(strings.TrimSpace(status), "{") {
		return core.Invalid("status_is_invalid")
	}
	_, err := s.core.Q.SetRelayProxyAutoAgentStatus(ctx, db.SetRelayProxyAutoAgentStatusParams{RelayProxyID: relayID, ID: agentID,
		Status: status})
	return core.Translate(err)
}

// SyncPlan is what a manual sync needs: where the agent is, the key it
// takes, and what it is sent.
type SyncPlan struct {
	Host  string
	Key   string
	Relay Relay
}

// PlanSync checks that the actor may sync a relay proxy's manual agent and
// returns what the push needs. An agent the relay proxy does not list is
// FeatBit's "Inconsistent relay proxy data".
func (s *RelayProxies) PlanSync(ctx context.Context, a *core.Actor, id uuid.UUID, agentID string) (SyncPlan, error) {
	orgID, err := a.Org()
	if err != nil {
		return SyncPlan{}, err
	}
	if err := mayManage(a); err != nil {
		return SyncPlan{}, err
	}
	r, err := s.core.Q.GetRelayProxy(ctx, db.GetRelayProxyParams{OrganizationID: orgID, ID: id})
	if err != nil {
		return SyncPlan{}, core.Translate(err)
	}
	agents := agentsOf(r.Agents)
	i := slices.IndexFunc(agents, func(ag Agent) bool { return ag.ID == agentID })
	if i < 0 {
		return SyncPlan{}, ErrInconsistent
	}
	key, err := s.core.ServerKeys.Open(r.SealedKey)
	if err != nil {
		return SyncPlan{}, err
	}
	relay, err := s.relay(ctx, s.core.Q, r, a.WorkspaceID)
	if err != nil {
		return SyncPlan{}, err
	}
	if err := requireEnvs(a, r.IsAllEnvs, relayEnvs(relay)); err != nil {
		return SyncPlan{}, err
	}
	return SyncPlan{Host: agents[i].Host, Key: key, Relay: relay}, nil
}

func relayEnvs(r Relay) []orgEnv {
	out := make([]orgEnv, len(r.Envs))
	for i, e := range r.Envs {
		out[i] = orgEnv{EnvID: e.EnvID, ProjectKey: e.ProjectKey, EnvKey: e.EnvKey}
	}
	return out
}

// SyncResult is FeatBit's SyncResult: what a manual sync did.
type SyncResult struct {
	Success     bool       `json:"success"`
	SyncAt      *time.Time `json:"syncAt"`
	Serves      string     `json:"serves"`
	DataVersion int64      `json:"dataVersion"`
	Reason      string     `json:"reason"`
}

// Synced records a manual agent's successful sync (what it serves, its
// data version, when), audited as a change of the relay proxy.
func (s *RelayProxies) Synced(ctx context.Context, a *core.Actor, id uuid.UUID, agentID string, res SyncResult) error {
	orgID, err := a.Org()
	if err != nil {
		return err
	}
	if err := mayManage(a); err != nil {
		return err
	}
	if len(res.Serves) > maxStatusLen {
		res.Serves = res.Serves[:maxStatusLen]
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		r, err := q.LockRelayProxy(ctx, db.LockRelayProxyParams{OrganizationID: orgID, ID: id})
		if err != nil {
			return err
		}
		agents := agentsOf(r.Agents)
		i := slices.IndexFunc(agents, func(ag Agent) bool { return ag.ID == agentID })
		if i < 0 {
			return ErrInconsistent
		}
		before := agents[i]
		agents[i].SyncAt, agents[i].Serves, agents[i].DataVersion = res.SyncAt, res.Serves, res.DataVersion
		raw, err := json.Marshal(agents)
		if err != nil {
			return err
		}
		if err := q.SetRelayProxyAgents(ctx, db.SetRelayProxyAgentsParams{ID: id, Agents: raw}); err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: refType, RefID: id.String(), Keyword: r.Name, Operation: core.OpUpdate,
			Comment: "agent " + agentID + " synced", Previous: before, Current: agents[i]})
	})
}
