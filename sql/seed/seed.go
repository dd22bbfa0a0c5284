// Package seed bulk-loads realistic data shaped like the store's own rows:
// flags with targeting, segments, members with groups, and policies. Scale
// tests and the benchmark (`bunting-bench`) share it, so what is measured is
// what is tested. It writes with set-based SQL and COPY, never through the
// store, so a million flags take seconds rather than hours; it depends on
// nothing but pgx, so the store's own tests can use it without an import cycle.
package seed

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// FlagKey is the key of seeded flag number i (from 1): flag-0000042.
func FlagKey(i int) string { return fmt.Sprintf("flag-%07d", i) }

// Flags describes flags to add to an environment.
type Flags struct {
	EnvID   uuid.UUID
	Creator uuid.UUID
	// From and To number the flags: those numbered From+1 to To are inserted,
	// so an environment can be grown step by step.
	From, To int
	// Segments, when given, are used by every tenth flag: a rule "User is in
	// segment" naming one of them (segment_refs kept as the store keeps it).
	Segments []uuid.UUID
}

// Shapes of a seeded flag, as the store stores them (store.Variation,
// store.TargetUser, store.FlagRule, store.Fallthrough). Every flag is a
// boolean flag with variations "on" and "off".
const (
	flagVariations = `[{"id":"on","name":"True","value":"true"},{"id":"off","name":"False","value":"false"}]`
	flagTargets    = `[{"keyIds":["alice","bob"],"variationId":"on"}]`
	flagRules      = `[{"id":"r1","name":"Beta","dispatchKey":"keyId","includedInExpt":true,
		"conditions":[{"id":"c1","property":"country","op":"IsOneOf","value":"[\"NL\",\"BE\"]"},{"id":"c2","property":"plan","op":"Equal","value":"pro"}],
		"variations":[{"id":"on","rollout":[0,0.3],"exptRollout":1},{"id":"off","rollout":[0.3,1],"exptRollout":1}]},
		{"id":"r2","name":"Staff","dispatchKey":null,"includedInExpt":false,
		"conditions":[{"id":"c3","property":"email","op":"EndsWith","value":"@example.com"}],
		"variations":[{"id":"on","rollout":[0,1],"exptRollout":1}]}]`
	// segmentRule is appended to the rules of every tenth flag, with SEGMENT
	// replaced by a segment id.
	segmentRule = `{"id":"r3","name":"Segment","dispatchKey":null,"includedInExpt":true,
		"conditions":[{"id":"c4","property":"User is in segment","op":"","value":"[\"SEGMENT\"]"}],
		"variations":[{"id":"on","rollout":[0,0.5],"exptRollout":1},{"id":"off","rollout":[0.5,1],"exptRollout":1}]}`
	flagFallthrough = `{"dispatchKey":null,"includedInExpt":true,"variations":[{"id":"on","rollout":[0,0.1],"exptRollout":1},{"id":"off","rollout":[0.1,1],"exptRollout":1}]}`
)

// InsertFlags inserts flags in one statement: keys FlagKey(i), names such as
// "Payments experiment 42" (searchable by part of a name), every other flag
// enabled, one of twenty team tags, each a second older than the one before.
// Refresh the planner's statistics afterwards (VACUUM ANALYZE).
func InsertFlags(ctx context.Context, pool *pgxpool.Pool, f Flags) error {
	if f.Segments == nil {
		f.Segments = []uuid.UUID{}
	}
	_, err := pool.Exec(ctx, `
		INSERT INTO feature_flags (env_id, key, name, variation_type, variations, target_users, rules, is_enabled,
			disabled_variation_id, fallthrough, tags, segment_refs, revision, creator_id, updator_id, created_at)
		SELECT $1, 'flag-' || lpad(i::text, 7, '0'),
			(ARRAY['Checkout','Search','Payments','Onboarding','Pricing'])[1 + i % 5] || ' experiment ' || i,
			'boolean', $2::jsonb, $3::jsonb,
			CASE WHEN s.id IS NULL THEN $4::jsonb
				ELSE $4::jsonb || jsonb_build_array(replace($5::text, 'SEGMENT', s.id::text)::jsonb) END,
			i % 2 = 0, 'off', $6::jsonb, ARRAY['team-' || (i % 20)],
			CASE WHEN s.id IS NULL THEN '{}'::uuid[] ELSE ARRAY[s.id] END,
			gen_random_uuid(), $7, $7, now() - make_interval(secs => i)
		FROM generate_series($8::int + 1, $9::int) AS i
		LEFT JOIN LATERAL (
			SELECT ($10::uuid[])[1 + (i / 10) % cardinality($10::uuid[])] AS id
			WHERE i % 10 = 0 AND cardinality($10::uuid[]) > 0
		) s ON true`,
		f.EnvID, flagVariations, flagTargets, flagRules, segmentRule, flagFallthrough, f.Creator, f.From, f.To, f.Segments)
	if err != nil {
		return fmt.Errorf("seed flags: %w", err)
	}
	return nil
}

// Segments describes environment-specific segments to add.
type Segments struct {
	WorkspaceID, OrgID, EnvID uuid.UUID
	// Scope is the environment's scope name,
	// organization/{org}:project/{project}:env/{env}.
	Scope string
	N     int
}

// InsertSegments inserts n segments, each listing 20 included and 2 excluded
// users and one rule, and returns their ids in order of their keys
// (segment-0001, ...).
func InsertSegments(ctx context.Context, pool *pgxpool.Pool, s Segments) ([]uuid.UUID, error) {
	rules := `[{"id":"r1","name":"Customers","conditions":[{"id":"c1","property":"plan","op":"IsOneOf","value":"[\"pro\",\"team\"]"},{"id":"c2","property":"country","op":"Equal","value":"NL"}]}]`
	rows, err := pool.Query(ctx, `
		INSERT INTO segments (workspace_id, organization_id, env_id, key, name, type, scopes, description,
			included, excluded, rules, tags)
		SELECT $1, $2, $3, 'segment-' || lpad(i::text, 4, '0'),
			(ARRAY['Beta testers','Enterprise customers','Early adopters','Internal staff'])[1 + i % 4] || ' ' || i,
			'environment-specific', ARRAY[$4::text], 'Seeded segment ' || i,
			ARRAY(SELECT 'user-' || i || '-' || j FROM generate_series(1, 20) AS j),
			ARRAY['blocked-' || i, 'blocked-' || (i + 1)], $5::jsonb, ARRAY['tier-' || (i % 5)]
		FROM generate_series(1, $6::int) AS i
		ORDER BY i
		RETURNING id`, s.WorkspaceID, s.OrgID, s.EnvID, s.Scope, rules, s.N)
	if err != nil {
		return nil, fmt.Errorf("seed segments: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("seed segments: %w", err)
	}
	return ids, nil
}

// Organization describes the members and groups to add to an organization.
type Organization struct {
	WorkspaceID, OrgID uuid.UUID
	Members, Groups    int
	// Domain is part of every member's email (MemberEmail), so two
	// organizations seeded with different domains do not collide.
	Domain string
	// BasePolicy is held directly by every member.
	BasePolicy uuid.UUID
	// Policy, when not BasePolicy, is held directly by every tenth member and
	// attached to every twentieth group.
	Policy uuid.UUID
	// PasswordHash, when set, is every member's bcrypt password hash (hash
	// once, reuse for all); otherwise members have no password.
	PasswordHash string
}

var (
	firstNames = []string{"ann", "bob", "cara", "dev", "emil", "fatima", "george", "hana", "ivan", "jun", "kofi", "lena"}
	lastNames  = []string{"smith", "garcia", "chen", "okafor", "novak", "tanaka", "silva", "muller", "khan"}
	colours    = []string{"crimson", "teal", "amber", "indigo", "olive", "coral", "slate"}
)

// MemberEmail is the email of seeded member i (from 0) of a domain, such as
// ann.smith.00042@acme-0.example: searchable by part of it, ".0004" matching
// ten members.
func MemberEmail(domain string, i int) string {
	first, last := firstNames[i%len(firstNames)], lastNames[i/len(firstNames)%len(lastNames)]
	return fmt.Sprintf("%s.%s.%05d@%s-%d.example", first, last, i, domain, i%7)
}

// Members is what InsertMembers created.
type Members struct {
	Users, Groups []uuid.UUID
}

// InsertMembers fills an organization with COPY: users with varied emails
// and names, each a member of the workspace and the organization holding the
// base policy (and every tenth the policy); groups with varied names (every
// twentieth holding the policy); each member in one group.
func InsertMembers(ctx context.Context, pool *pgxpool.Pool, o Organization) (Members, error) {
	m := Members{Users: make([]uuid.UUID, o.Members), Groups: make([]uuid.UUID, o.Groups)}
	var hash *string
	if o.PasswordHash != "" {
		hash = &o.PasswordHash
	}
	copyRows := func(table string, cols []string, n int, row func(i int) []any) error {
		rows := make([][]any, n)
		for i := range rows {
			rows[i] = row(i)
		}
		if _, err := pool.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows)); err != nil {
			return fmt.Errorf("seed %s: %w", table, err)
		}
		return nil
	}
	steps := []func() error{
		func() error {
			return copyRows("users", []string{"id", "email", "name", "password_hash"}, o.Members, func(i int) []any {
				m.Users[i] = uuid.New()
				first, last := firstNames[i%len(firstNames)], lastNames[i/len(firstNames)%len(lastNames)]
				return []any{m.Users[i], MemberEmail(o.Domain, i), fmt.Sprintf("%s %s %d", first, last, i), hash}
			})
		},
		func() error {
			return copyRows("workspace_users", []string{"workspace_id", "user_id"}, o.Members, func(i int) []any {
				return []any{o.WorkspaceID, m.Users[i]}
			})
		},
		func() error {
			return copyRows("organization_users", []string{"organization_id", "user_id"}, o.Members, func(i int) []any {
				return []any{o.OrgID, m.Users[i]}
			})
		},
		func() error {
			return copyRows("member_policies", []string{"organization_id", "user_id", "policy_id"}, o.Members, func(i int) []any {
				return []any{o.OrgID, m.Users[i], o.BasePolicy}
			})
		},
		func() error {
			if o.Policy == o.BasePolicy {
				return nil
			}
			return copyRows("member_policies", []string{"organization_id", "user_id", "policy_id"}, o.Members/10, func(i int) []any {
				return []any{o.OrgID, m.Users[i*10], o.Policy}
			})
		},
		func() error {
			return copyRows("groups", []string{"id", "organization_id", "name", "description"}, o.Groups, func(i int) []any {
				m.Groups[i] = uuid.New()
				return []any{m.Groups[i], o.OrgID, fmt.Sprintf("Team %s %04d", colours[i%len(colours)], i), "a team"}
			})
		},
		func() error {
			return copyRows("group_policies", []string{"group_id", "policy_id"}, o.Groups/20, func(i int) []any {
				return []any{m.Groups[i*20], o.Policy}
			})
		},
		func() error {
			if o.Groups == 0 {
				return nil
			}
			return copyRows("group_members", []string{"group_id", "organization_id", "user_id"}, o.Members, func(i int) []any {
				return []any{m.Groups[i%o.Groups], o.OrgID, m.Users[i]}
			})
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return Members{}, err
		}
	}
	return m, nil
}

// policyStatement is an access.Statement.
type policyStatement struct {
	ID           string   `json:"id"`
	ResourceType string   `json:"resourceType"`
	Effect       string   `json:"effect"`
	Actions      []string `json:"actions"`
	Resources    []string `json:"resources"`
}

// InsertPolicies inserts n customer-managed policies (keys policy-001, ...),
// each allowing a team access to one project's environments and flags, and
// returns their ids in key order.
func InsertPolicies(ctx context.Context, pool *pgxpool.Pool, orgID uuid.UUID, n int) ([]uuid.UUID, error) {
	rows := make([][]any, n)
	ids := make([]uuid.UUID, n)
	for i := range rows {
		project := fmt.Sprintf("project-%02d", i%10)
		statements, err := json.Marshal([]policyStatement{
			{ID: "access", ResourceType: "project", Effect: "allow", Actions: []string{"CanAccessProject"},
				Resources: []string{"project/" + project}},
			{ID: "flags", ResourceType: "flag", Effect: "allow", Actions: []string{"ToggleFlag", "UpdateFlagTargetingRules", "UpdateFlagDescription"},
				Resources: []string{"project/" + project + ":env/*:flag/*"}},
			{ID: "no-prod", ResourceType: "env", Effect: "deny", Actions: []string{"DeleteEnv"},
				Resources: []string{"project/" + project + ":env/prod"}},
		})
		if err != nil {
			return nil, err
		}
		ids[i] = uuid.New()
		rows[i] = []any{ids[i], orgID, fmt.Sprintf("Team %03d", i+1), fmt.Sprintf("policy-%03d", i+1),
			"Seeded team policy", "CustomerManaged", statements}
	}
	cols := []string{"id", "organization_id", "name", "key", "description", "type", "statements"}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"policies"}, cols, pgx.CopyFromRows(rows)); err != nil {
		return nil, fmt.Errorf("seed policies: %w", err)
	}
	return ids, nil
}
