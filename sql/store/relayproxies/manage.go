package relayproxies

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// refType is what audit entries of relay proxies name their subject.
const refType = "RelayProxy"

// List returns one page of the organization's relay proxies whose name
// contains f.Name, newest first, keys masked, auto agents newest first.
func (s *RelayProxies) List(ctx context.Context, a *core.Actor, f Filter) (core.Paged[Item], error) {
	orgID, err := a.Org()
	if err != nil {
		return core.Paged[Item]{}, err
	}
	var v core.Validator
	f.Page.Check(&v)
	v.Text("name", f.Name, core.MaxNameLen)
	if err := v.Err(); err != nil {
		return core.Paged[Item]{}, err
	}
	if err := mayList(a); err != nil {
		return core.Paged[Item]{}, err
	}
	name := strings.TrimSpace(f.Name)
	rows, err := s.core.Q.ListRelayProxies(ctx, db.ListRelayProxiesParams{OrganizationID: orgID, Name: escapeLike(name),
		Limit: f.Page.Limit(), Offset: f.Page.Offset()})
	if err != nil {
		return core.Paged[Item]{}, core.Translate(err)
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.RelayProxy.ID
	}
	auto, err := s.autoAgents(ctx, s.core.Q, ids)
	if err != nil {
		return core.Paged[Item]{}, err
	}
	envs, err := s.envs(ctx, s.core.Q, orgID, true, nil)
	if err != nil {
		return core.Paged[Item]{}, err
	}
	byEnv := byID(envs)
	return core.PageOfCounted(rows, nil, func(r db.ListRelayProxiesRow) (Item, int64) {
		return item(r.RelayProxy, auto[r.RelayProxy.ID], byEnv), r.Total
	}, func() (int64, error) {
		return s.core.Q.CountRelayProxies(ctx, db.CountRelayProxiesParams{OrganizationID: orgID, Name: escapeLike(name)})
	})
}

// escapeLike makes a name's text match itself in ILIKE.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func (s *RelayProxies) autoAgents(ctx context.Context, q *db.Queries, ids []uuid.UUID) (map[uuid.UUID][]AutoAgent, error) {
	rows, err := q.ListRelayProxyAutoAgents(ctx, ids)
	if err != nil {
		return nil, core.Translate(err)
	}
	out := map[uuid.UUID][]AutoAgent{}
	for _, r := range rows {
		out[r.RelayProxyID] = append(out[r.RelayProxyID], AutoAgent{ID: r.ID, Status: r.Status, RegisteredAt: r.RegisteredAt})
	}
	return out, nil
}

// Get returns one relay proxy of the organization, its key masked.
func (s *RelayProxies) Get(ctx context.Context, a *core.Actor, id uuid.UUID) (Item, error) {
	orgID, err := a.Org()
	if err != nil {
		return Item{}, err
	}
	if err := mayList(a); err != nil {
		return Item{}, err
	}
	return s.get(ctx, s.core.Q, orgID, id, false)
}

func (s *RelayProxies) get(ctx context.Context, q *db.Queries, orgID, id uuid.UUID, lock bool) (Item, error) {
	var r db.RelayProxy
	var err error
	if lock {
		r, err = q.LockRelayProxy(ctx, db.LockRelayProxyParams{OrganizationID: orgID, ID: id})
	} else {
		r, err = q.GetRelayProxy(ctx, db.GetRelayProxyParams{OrganizationID: orgID, ID: id})
	}
	if err != nil {
		return Item{}, core.Translate(err)
	}
	auto, err := s.autoAgents(ctx, q, []uuid.UUID{id})
	if err != nil {
		return Item{}, err
	}
	envs, err := s.envs(ctx, q, orgID, true, nil)
	if err != nil {
		return Item{}, err
	}
	return item(r, auto[id], byID(envs)), nil
}

// Create makes a relay proxy and answers it with its key, the only time
// the key is shown; only its hash, its first characters and a sealed copy
// are kept.
func (s *RelayProxies) Create(ctx context.Context, a *core.Actor, in Input) (RelayProxy, error) {
	orgID, err := a.Org()
	if err != nil {
		return RelayProxy{}, err
	}
	if err := mayManage(a); err != nil {
		return RelayProxy{}, err
	}
	all, err := s.envs(ctx, s.core.Q, orgID, true, nil)
	if err != nil {
		return RelayProxy{}, err
	}
	envs := byID(all)
	var v core.Validator
	scopes := check(&v, &in, envs, nil)
	if err := v.Err(); err != nil {
		return RelayProxy{}, err
	}
	if err := requireEnvs(a, in.IsAllEnvs, pick(envs, scopes)); err != nil {
		return RelayProxy{}, err
	}
	now := time.Now().UTC()
	agents := make([]Agent, len(in.Agents))
	for i, ag := range in.Agents {
		agents[i] = Agent{ID: ag.ID, Name: ag.Name, Host: ag.Host, CreatedAt: &now}
	}
	rawAgents, err := json.Marshal(agents)
	if err != nil {
		return RelayProxy{}, err
	}
	key := NewKey(now)
	var out RelayProxy
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		used, err := q.RelayProxyNameUsed(ctx, db.RelayProxyNameUsedParams{OrganizationID: orgID, Name: in.Name})
		if err != nil {
			return err
		}
		if used {
			return core.ErrNameUsed
		}
		r, err := q.CreateRelayProxy(ctx, db.CreateRelayProxyParams{OrganizationID: orgID, Name: in.Name, Description: in.Description,
			KeyHash: HashKey(key), KeyPrefix: key[:keyPrefixLen], SealedKey: s.core.ServerKeys.Seal(key), IsAllEnvs: in.IsAllEnvs,
			Scopes: core.OrEmpty(scopes), Agents: rawAgents})
		if err != nil {
			return err
		}
		out = RelayProxy{ID: r.ID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, OrganizationID: orgID, Name: r.Name, Key: key,
			Description: r.Description, IsAllEnvs: r.IsAllEnvs, Scopes: scopeStrings(r.Scopes), Agents: agents, AutoAgents: []AutoAgent{}}
		return s.core.Audit(ctx, q, a, core.Change{RefType: refType, RefID: r.ID.String(), Keyword: r.Name, Operation: core.OpCreate,
			Current: item(r, nil, envs)})
	})
	if err != nil {
		return RelayProxy{}, err
	}
	return out, nil
}

// pick is the environments of ids that still exist: a deleted one is
// nobody's to read.
func pick(envs map[uuid.UUID]orgEnv, ids []uuid.UUID) []orgEnv {
	out := make([]orgEnv, 0, len(ids))
	for _, id := range ids {
		if e, ok := envs[id]; ok {
			out = append(out, e)
		}
	}
	return out
}

// Update replaces a relay proxy's name, description, scopes and manual
// agents, and removes the auto agents in.AutoAgents leaves out. What a
// manual agent's last sync recorded is kept (the server wrote it, not the
// caller). Connected relays learn of it within seconds, through the change
// feed: a narrower scope, or the key's removal, reaches them at once.
func (s *RelayProxies) Update(ctx context.Context, a *core.Actor, id uuid.UUID, in Input) error {
	orgID, err := a.Org()
	if err != nil {
		return err
	}
	if err := mayManage(a); err != nil {
		return err
	}
	// One of another organization is not found, whatever the input says.
	stored, err := s.core.Q.GetRelayProxy(ctx, db.GetRelayProxyParams{OrganizationID: orgID, ID: id})
	if err != nil {
		return core.Translate(err)
	}
	all, err := s.envs(ctx, s.core.Q, orgID, true, nil)
	if err != nil {
		return err
	}
	envs := byID(all)
	var v core.Validator
	scopes := check(&v, &in, envs, stored.Scopes)
	keep := make([]string, 0, len(in.AutoAgents))
	for _, ag := range in.AutoAgents {
		if strings.TrimSpace(ag.ID) == "" {
			v.Add("autoAgents", "invalid")
			break
		}
		keep = append(keep, ag.ID)
	}
	if err := v.Err(); err != nil {
		return err
	}
	if err := requireEnvs(a, in.IsAllEnvs, pick(envs, scopes)); err != nil {
		return err
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		before, err := s.get(ctx, q, orgID, id, true)
		if err != nil {
			return err
		}
		// The environments it reached stay readable only to who may
		// read them: nobody widens or narrows a key they could not make.
		if err := requireEnvs(a, before.IsAllEnvs, pick(envs, parseScopes(before.Scopes))); err != nil {
			return err
		}
		used, err := q.RelayProxyNameUsed(ctx, db.RelayProxyNameUsedParams{OrganizationID: orgID, Name: in.Name, OtherThan: id})
		if err != nil {
			return err
		}
		if used {
			return core.ErrNameUsed
		}
		now := time.Now().UTC()
		agents := make([]Agent, len(in.Agents))
		for i, ag := range in.Agents {
			agents[i] = Agent{ID: ag.ID, Name: ag.Name, Host: ag.Host, CreatedAt: &now}
			for _, old := range before.Agents {
				if old.ID == ag.ID {
					agents[i].CreatedAt, agents[i].SyncAt = old.CreatedAt, old.SyncAt
					agents[i].Serves, agents[i].DataVersion = old.Serves, old.DataVersion
				}
			}
		}
		raw, err := json.Marshal(agents)
		if err != nil {
			return err
		}
		r, err := q.UpdateRelayProxy(ctx, db.UpdateRelayProxyParams{OrganizationID: orgID, ID: id, Name: in.Name,
			Description: in.Description, IsAllEnvs: in.IsAllEnvs, Scopes: core.OrEmpty(scopes), Agents: raw})
		if err != nil {
			return err
		}
		if _, err := q.KeepRelayProxyAutoAgents(ctx, db.KeepRelayProxyAutoAgentsParams{RelayProxyID: id, Keep: keep}); err != nil {
			return err
		}
		auto, err := s.autoAgents(ctx, q, []uuid.UUID{id})
		if err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: refType, RefID: id.String(), Keyword: r.Name, Operation: core.OpUpdate,
			Previous: before, Current: item(r, auto[id], envs), Event: changed(id, orgID)})
	})
}

func parseScopes(scopes []string) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(scopes))
	for _, sc := range scopes {
		if id, err := uuid.Parse(sc); err == nil {
			out = append(out, id)
		}
	}
	return out
}

// IsNameUsed reports whether the organization has a relay proxy of this
// name, ignoring case.
func (s *RelayProxies) IsNameUsed(ctx context.Context, a *core.Actor, name string) (bool, error) {
	orgID, err := a.Org()
	if err != nil {
		return false, err
	}
	var v core.Validator
	v.Required("name", name, core.MaxNameLen)
	if err := v.Err(); err != nil {
		return false, err
	}
	if err := mayList(a); err != nil {
		return false, err
	}
	used, err := s.core.Q.RelayProxyNameUsed(ctx, db.RelayProxyNameUsedParams{OrganizationID: orgID, Name: strings.TrimSpace(name)})
	return used, core.Translate(err)
}

// Delete removes a relay proxy: its key stops working, and the relays
// connected with it are closed (4003) within seconds.
func (s *RelayProxies) Delete(ctx context.Context, a *core.Actor, id uuid.UUID) error {
	orgID, err := a.Org()
	if err != nil {
		return err
	}
	if err := mayManage(a); err != nil {
		return err
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		before, err := s.get(ctx, q, orgID, id, true)
		if err != nil {
			return err
		}
		n, err := q.DeleteRelayProxy(ctx, db.DeleteRelayProxyParams{OrganizationID: orgID, ID: id})
		if err != nil {
			return err
		}
		if n == 0 {
			return core.ErrNotFound
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: refType, RefID: id.String(), Keyword: before.Name, Operation: core.OpRemove,
			Previous: before, Event: changed(id, orgID)})
	})
}

// Quota is one entry of the licence quota: how many there may be, and are.
type Quota struct {
	Quota int64 `json:"quota"`
	Used  int64 `json:"used"`
}

// LicenseQuota answers FeatBit's licence quota of the actor's workspace:
// the auto agents of every relay proxy of its organizations, against the
// quota given (the setting). Any member may read it, as in FeatBit.
func (s *RelayProxies) LicenseQuota(ctx context.Context, a *core.Actor, quota int64) (map[string]Quota, error) {
	ws, err := a.Workspace()
	if err != nil {
		return nil, err
	}
	used, err := s.core.Q.CountWorkspaceAutoAgents(ctx, ws)
	if err != nil {
		return nil, core.Translate(err)
	}
	return map[string]Quota{"auto-agents": {Quota: quota, Used: used}}, nil
}

// The pages change one thing at a time; each is an Update of everything
// else as it is, so it is checked, audited and announced the same way.

// inputOf is a relay proxy's settings as they are.
func inputOf(it Item) Input {
	return Input{Name: it.Name, Description: it.Description, IsAllEnvs: it.IsAllEnvs, Scopes: it.Scopes,
		Agents: it.Agents, AutoAgents: it.AutoAgents}
}

// SetSettings changes a relay proxy's name, description and scope, keeping
// its agents.
func (s *RelayProxies) SetSettings(ctx context.Context, a *core.Actor, id uuid.UUID, name, description string, all bool, scopes []string) error {
	it, err := s.Get(ctx, a, id)
	if err != nil {
		return err
	}
	in := inputOf(it)
	in.Name, in.Description, in.IsAllEnvs, in.Scopes = name, description, all, scopes
	return s.Update(ctx, a, id, in)
}

// AddAgent adds a manual agent; its id is made here.
func (s *RelayProxies) AddAgent(ctx context.Context, a *core.Actor, id uuid.UUID, name, host string) error {
	it, err := s.Get(ctx, a, id)
	if err != nil {
		return err
	}
	var v core.Validator
	v.Required("name", name, core.MaxNameLen)
	checkHost(&v, "host", host)
	if err := v.Err(); err != nil {
		return err
	}
	in := inputOf(it)
	in.Agents = append(in.Agents, Agent{ID: uuid.NewString(), Name: strings.TrimSpace(name), Host: strings.TrimSpace(host)})
	return s.Update(ctx, a, id, in)
}

// RemoveAgent removes a manual agent.
func (s *RelayProxies) RemoveAgent(ctx context.Context, a *core.Actor, id uuid.UUID, agentID string) error {
	it, err := s.Get(ctx, a, id)
	if err != nil {
		return err
	}
	in := inputOf(it)
	in.Agents = slices.DeleteFunc(in.Agents, func(ag Agent) bool { return ag.ID == agentID })
	return s.Update(ctx, a, id, in)
}

// RemoveAutoAgent removes an auto agent; it registers again when it restarts.
func (s *RelayProxies) RemoveAutoAgent(ctx context.Context, a *core.Actor, id uuid.UUID, agentID string) error {
	it, err := s.Get(ctx, a, id)
	if err != nil {
		return err
	}
	in := inputOf(it)
	in.AutoAgents = slices.DeleteFunc(in.AutoAgents, func(ag AutoAgent) bool { return ag.ID == agentID })
	return s.Update(ctx, a, id, in)
}

// Scopes are the environments of the organization a scope may name, in
// the pages' order, for the scope picker.
func (s *RelayProxies) Scopes(ctx context.Context, a *core.Actor) ([]ScopeChoice, error) {
	orgID, err := a.Org()
	if err != nil {
		return nil, err
	}
	if err := mayList(a); err != nil {
		return nil, err
	}
	rows, err := s.envs(ctx, s.core.Q, orgID, true, nil)
	if err != nil {
		return nil, err
	}
	out := make([]ScopeChoice, len(rows))
	for i, r := range rows {
		out[i] = ScopeChoice{EnvID: r.EnvID, ProjectName: r.ProjectName, EnvName: r.EnvName}
	}
	return out, nil
}

// ScopeChoice is an environment a relay proxy may serve.
type ScopeChoice struct {
	EnvID                uuid.UUID
	ProjectName, EnvName string
}
