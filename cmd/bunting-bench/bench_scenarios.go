package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/bunting-flags/bunting/sql/seed"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// The two targets every scenario runs against.
const (
	targetBunting = "bunting"
	targetFloor   = "floor"
)

// benchScenario is one kind of request, as Bunting's API and as the floor
// take it.
type benchScenario struct {
	name string
	// kind is "read", "write", "sign-in" or "evaluate"; the targets differ by kind.
	kind string
	// perSize scenarios depend on the number of flags and run at every size;
	// the others run once, at the first.
	perSize bool
	// request makes a client's next request.
	request func(w *benchWorld, target string, c *benchClient) benchRequest
	// run, when set, is the whole measurement instead (the streaming
	// scenarios of bench_stream.go, which hold connections, not requests).
	run func(ctx context.Context, w *benchWorld, target string) (benchResult, error)
	// prepare, done and cleanup are optional: before a run (unmeasured),
	// after each successful answer, and after a run (unmeasured).
	prepare func(ctx context.Context, w *benchWorld, clients []*benchClient) error
	done    func(target string, c *benchClient, body []byte) error
	cleanup func(ctx context.Context, w *benchWorld) error
	// evaluations, when set, is how many flags a request evaluates.
	evaluations func(w *benchWorld) int
	// noFloor scenarios run against Bunting only.
	noFloor bool
}

// benchRequest is a path under the target's base URL, with its body.
type benchRequest struct {
	method, path string
	body         []byte
	// noAuth leaves out the Authorization header (sign-in); auth, when set,
	// is sent instead of the API credential (an environment secret).
	noAuth bool
	auth   string
}

// benchClient is one concurrent client: its own random sequence (seeded
// alike for both targets, so they get the same requests), the flags and
// segments only it writes (so writers never wait on each other's row locks
// or conflict on revisions), and what it measured.
type benchClient struct {
	// run numbers the measurements, so no write repeats an earlier one
	// (a write that changes nothing is not a write).
	run, id, seq  int
	rng           *rand.Rand
	descFlags     []int
	targetFlags   []int
	patchSegments []uuid.UUID
	revisions     map[string]string
	lastKey       string

	latencies []int64 // nanoseconds
	errors    int64
	samples   []string
}

// ownedPerClient is how many flags or segments each client writes, in turn.
const ownedPerClient = 8

func (w *benchWorld) newClients(scenarioIndex int) []*benchClient {
	w.runs++
	n := w.o.Clients
	owned := func(c, lo, hi int) []int { // numbers lo..hi that are c's
		var out []int
		for j := range ownedPerClient {
			if k := lo + c + j*n; k <= hi {
				out = append(out, k)
			}
		}
		return out
	}
	clients := make([]*benchClient, n)
	for i := range clients {
		c := &benchClient{run: w.runs, id: i, rng: rand.New(rand.NewPCG(uint64(scenarioIndex), uint64(i))),
			descFlags: owned(i, 1, w.flags/2), targetFlags: owned(i, w.flags/2+1, w.flags), revisions: map[string]string{}}
		for _, k := range owned(i, 0, len(w.patchSegments)-1) {
			c.patchSegments = append(c.patchSegments, w.patchSegments[k])
		}
		clients[i] = c
	}
	return clients
}

// pick returns the client's next item of a list it cycles through.
func pick[T any](c *benchClient, items []T) T { return items[c.seq%len(items)] }

func jsonBody(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only the benchmark's own values are marshalled
	}
	return b
}

// benchScenarios are the scenarios in the order they run: reads first, so
// writes do not change what reads see; sign-in, the streams, then
// applications' evaluations (bench_ofrep.go) and reports (bench_insight.go)
// last.
var benchScenarios = slices.Concat([]benchScenario{
	{
		name: "get-flag", kind: "read", perSize: true,
		request: func(w *benchWorld, target string, c *benchClient) benchRequest {
			key := seed.FlagKey(1 + c.rng.IntN(w.flags))
			if target == targetFloor {
				return benchRequest{method: "GET", path: "/floor/envs/" + w.envID.String() + "/flags/" + key}
			}
			return benchRequest{method: "GET", path: "/api/v1/envs/" + w.envID.String() + "/feature-flags/" + key}
		},
	},
	{
		// A search by part of a name: "experiment 4242" matches that flag
		// and those whose number starts with its digits (a few, usually).
		name: "search-flags", kind: "read", perSize: true,
		request: func(w *benchWorld, target string, c *benchClient) benchRequest {
			q := url.QueryEscape(fmt.Sprintf("experiment %d", 1+c.rng.IntN(w.flags)))
			if target == targetFloor {
				return benchRequest{method: "GET", path: "/floor/envs/" + w.envID.String() + "/flags?name=" + q}
			}
			return benchRequest{method: "GET", path: "/api/v1/envs/" + w.envID.String() + "/feature-flags?name=" + q + "&pageIndex=0&pageSize=10"}
		},
	},
	{
		name: "segments-by-ids", kind: "read",
		request: func(w *benchWorld, target string, c *benchClient) benchRequest {
			ids := make([]string, 0, 20)
			seen := map[int]bool{}
			for len(ids) < 20 {
				if k := c.rng.IntN(len(w.allSegments)); !seen[k] {
					seen[k] = true
					ids = append(ids, w.allSegments[k].String())
				}
			}
			list := strings.Join(ids, ",")
			if target == targetFloor {
				return benchRequest{method: "GET", path: "/floor/orgs/" + w.orgID.String() + "/envs/" + w.envID.String() + "/segments/by-ids?ids=" + list}
			}
			return benchRequest{method: "GET", path: "/api/v1/envs/" + w.envID.String() + "/segments/by-ids?ids=" + list}
		},
	},
	{
		// The members holding a policy, searched by part of an email:
		// ".0421" matches ten members, one of whom holds it.
		name: "policy-members", kind: "read",
		request: func(w *benchWorld, target string, c *benchClient) benchRequest {
			search := fmt.Sprintf(".%05d", c.rng.IntN(w.o.Members))[:5]
			if target == targetFloor {
				return benchRequest{method: "GET", path: "/floor/orgs/" + w.orgID.String() + "/policies/" + w.policyID.String() + "/members?SearchText=" + search}
			}
			return benchRequest{method: "GET", path: "/api/v1/policies/" + w.policyID.String() + "/members?SearchText=" + search}
		},
	},
	{
		// A page of 100 flags compared with another environment that has
		// the first half of them: the largest comparison the pages ask for.
		name: scenarioCompare, kind: "read",
		prepare: prepareCompare,
		request: func(w *benchWorld, target string, c *benchClient) benchRequest {
			page := c.rng.IntN(max(1, w.flags/comparePage))
			if target == targetFloor {
				return benchRequest{method: "POST", path: fmt.Sprintf("/floor/envs/%s/compare/%s?page=%d", w.envID, w.compareEnv, page)}
			}
			return benchRequest{method: "POST", path: "/api/v1/envs/" + w.envID.String() + "/feature-flags/compare-overview",
				body: jsonBody(map[string]any{"targetEnvIds": []uuid.UUID{w.compareEnv},
					"filter": map[string]any{"pageIndex": page, "pageSize": comparePage}})}
		},
	},
	{
		name: "create-flag", kind: "write", perSize: true,
		request: func(w *benchWorld, target string, c *benchClient) benchRequest {
			key := fmt.Sprintf("new-%d-%d-%d", c.run, c.id, c.seq)
			body := jsonBody(map[string]any{"name": fmt.Sprintf("New flag %d %d", c.id, c.seq), "key": key,
				"description": "Created by the benchmark"})
			if target == targetFloor {
				return benchRequest{method: "POST", path: "/floor/envs/" + w.envID.String() + "/flags", body: body}
			}
			return benchRequest{method: "POST", path: "/api/v1/envs/" + w.envID.String() + "/feature-flags", body: body}
		},
		// The environment keeps exactly its seeded flags for what runs next.
		cleanup: func(ctx context.Context, w *benchWorld) error {
			_, err := w.pool.Exec(ctx, `DELETE FROM feature_flags WHERE env_id = $1 AND key LIKE 'new-%'`, w.envID)
			return err
		},
	},
	{
		// The description with the revision it was read at, as the UI sends
		// it; each client follows the revisions of its own flags.
		name: "flag-description", kind: "write", perSize: true,
		prepare: loadRevisions,
		request: describeFlag,
		done:    describedFlag,
	},
	{
		name: "flag-targeting", kind: "write", perSize: true,
		request: func(w *benchWorld, target string, c *benchClient) benchRequest {
			key := seed.FlagKey(pick(c, c.targetFlags))
			body := jsonBody(targetingChange(w, c))
			if target == targetFloor {
				return benchRequest{method: "PUT", path: "/floor/envs/" + w.envID.String() + "/flags/" + key + "/targeting", body: body}
			}
			return benchRequest{method: "PUT", path: "/api/v1/envs/" + w.envID.String() + "/feature-flags/" + key + "/targeting", body: body}
		},
	},
	{
		name: scenarioHangingWebhook, kind: "write",
		prepare: prepareHangingWebhook,
		request: describeFlag,
		done:    describedFlag,
		cleanup: cleanupHangingWebhook,
	},
	{
		// A JSON Patch of a segment no flag uses: its description and its
		// included users.
		name: "segment-patch", kind: "write",
		request: func(w *benchWorld, target string, c *benchClient) benchRequest {
			id := pick(c, c.patchSegments).String()
			included := make([]string, 20)
			for i := range included {
				included[i] = fmt.Sprintf("user-%d-%d-%d-%d", c.run, c.id, c.seq, i)
			}
			body := jsonBody([]map[string]any{
				{"op": "replace", "path": "/description", "value": fmt.Sprintf("Patched in run %d by client %d, change %d", c.run, c.id, c.seq)},
				{"op": "replace", "path": "/included", "value": included},
			})
			if target == targetFloor {
				return benchRequest{method: "PATCH", path: "/floor/orgs/" + w.orgID.String() + "/segments/" + id, body: body}
			}
			return benchRequest{method: "PATCH", path: "/api/v1/envs/" + w.envID.String() + "/segments/" + id, body: body}
		},
	},
	{
		name: "sign-in", kind: "sign-in",
		request: func(w *benchWorld, target string, c *benchClient) benchRequest {
			body := jsonBody(iam.LoginInput{Email: seed.MemberEmail(benchDomain, c.rng.IntN(w.o.Members)), Password: w.memberPassword})
			if target == targetFloor {
				return benchRequest{method: "POST", path: "/floor/login", body: body, noAuth: true}
			}
			return benchRequest{method: "POST", path: "/api/v1/identity/login-by-email", body: body, noAuth: true}
		},
	},
	{name: scenarioStreamFanout, kind: "stream", run: runFanout},
	{name: scenarioStreamStorm, kind: "stream", run: runStorm},
	{name: scenarioStreamSchedule, kind: "stream", run: runSchedule},
	{name: scenarioRelayFanout, kind: "stream", run: runRelayFanout, noFloor: true},
}, ofrepScenarios, insightScenarios, experimentScenarios)

func scenarioNames() []string {
	names := make([]string, len(benchScenarios))
	for i, s := range benchScenarios {
		names[i] = s.name
	}
	return names
}

// loadRevisions reads the current revision of every flag the clients write.
func loadRevisions(ctx context.Context, w *benchWorld, clients []*benchClient) error {
	owner := map[string]*benchClient{}
	var keys []string
	for _, c := range clients {
		for _, n := range c.descFlags {
			keys = append(keys, seed.FlagKey(n))
			owner[seed.FlagKey(n)] = c
		}
	}
	rows, err := w.pool.Query(ctx, `SELECT key, revision::text FROM feature_flags WHERE env_id = $1 AND key = ANY($2)`, w.envID, keys)
	if err != nil {
		return err
	}
	var key, rev string
	_, err = pgx.ForEachRow(rows, []any{&key, &rev}, func() error {
		owner[key].revisions[key] = rev
		return nil
	})
	return err
}

// targetingChange is a realistic targeting change: individual targets, three
// rules (one naming a segment) and a percentage rollout that moves each time.
func targetingChange(w *benchWorld, c *benchClient) flagstore.TargetingInput {
	split := []float64{0.1, 0.25, 0.5, 0.75}[c.seq%4]
	segment := w.refSegments[(c.id+c.seq)%len(w.refSegments)]
	keyID := "keyId"
	return flagstore.TargetingInput{Targeting: &flagstore.FlagTargeting{
		TargetUsers: []flagstore.TargetUser{
			{KeyIDs: []string{"alice", fmt.Sprintf("user-%d-%d-%d", c.run, c.id, c.seq)}, VariationID: "on"},
			{KeyIDs: []string{"mallory"}, VariationID: "off"},
		},
		Rules: []flagstore.FlagRule{
			{ID: "r1", Name: "Beta", DispatchKey: &keyID, IncludedInExpt: true,
				Conditions: []flagstore.Condition{
					{ID: "c1", Property: "country", Op: "IsOneOf", Value: `["NL","BE","DE"]`},
					{ID: "c2", Property: "plan", Op: "Equal", Value: "pro"},
				},
				Variations: []flagstore.RolloutVariation{{ID: "on", Rollout: []float64{0, split}, ExptRollout: 1}, {ID: "off", Rollout: []float64{split, 1}, ExptRollout: 1}}},
			{ID: "r2", Name: "Staff", IncludedInExpt: false,
				Conditions: []flagstore.Condition{{ID: "c3", Property: "email", Op: "EndsWith", Value: "@example.com"}},
				Variations: []flagstore.RolloutVariation{{ID: "on", Rollout: []float64{0, 1}, ExptRollout: 1}}},
			{ID: "r3", Name: "Segment", IncludedInExpt: true,
				Conditions: []flagstore.Condition{{ID: "c4", Property: targeting.SegmentIn, Value: `["` + segment.String() + `"]`}},
				Variations: []flagstore.RolloutVariation{{ID: "on", Rollout: []float64{0, 1}, ExptRollout: 1}}},
		},
		Fallthrough: flagstore.Fallthrough{IncludedInExpt: true, Variations: []flagstore.RolloutVariation{
			{ID: "on", Rollout: []float64{0, split}, ExptRollout: 1}, {ID: "off", Rollout: []float64{split, 1}, ExptRollout: 1}}},
	}}
}

// describeFlag changes the description of one of the client's flags, with
// the revision it was read at, as the UI sends it.
func describeFlag(w *benchWorld, target string, c *benchClient) benchRequest {
	key := seed.FlagKey(pick(c, c.descFlags))
	c.lastKey = key
	rev, err := uuid.Parse(c.revisions[key])
	if err != nil {
		panic(fmt.Sprintf("no revision for %s", key)) // loadRevisions loaded every owned flag
	}
	description := fmt.Sprintf("Described in run %d by client %d, change %d", c.run, c.id, c.seq)
	body := jsonBody(flagstore.DescriptionInput{Description: &description, Change: flagstore.Change{Revision: &rev}})
	if target == targetFloor {
		return benchRequest{method: "PUT", path: "/floor/envs/" + w.envID.String() + "/flags/" + key + "/description", body: body}
	}
	return benchRequest{method: "PUT", path: "/api/v1/envs/" + w.envID.String() + "/feature-flags/" + key + "/description", body: body}
}

// describedFlag keeps the revision a description change answered, for the
// client's next change of that flag.
func describedFlag(target string, c *benchClient, body []byte) error {
	var rev string
	if target == targetFloor {
		if err := json.Unmarshal(body, &rev); err != nil {
			return err
		}
	} else {
		var env struct {
			Data string `json:"data"`
		}
		if err := json.Unmarshal(body, &env); err != nil {
			return err
		}
		rev = env.Data
	}
	c.revisions[c.lastKey] = rev
	return nil
}

// compare-overview compares pages of comparePage flags; its check holds
// the slowest to compareMaxMs.
const (
	scenarioCompare = "compare-overview"
	comparePage     = 100
	compareMaxMs    = 5000
)

// prepareCompare seeds, once, the environment the measured one is compared
// with: the last environment of the last project (never the streaming
// scenarios' one, the first other environment of the first project), given
// the first half of the measured environment's flags, seeded alike but
// without the segment rules (its segments are the measured environment's).
func prepareCompare(ctx context.Context, w *benchWorld, _ []*benchClient) error {
	if w.compareEnv != uuid.Nil {
		return nil
	}
	var env uuid.UUID
	if err := w.pool.QueryRow(ctx, `SELECT e.id FROM environments e JOIN projects p ON p.id = e.project_id
		WHERE p.organization_id = $1 AND e.id <> $2 ORDER BY p.key DESC, e.key DESC LIMIT 1`, w.orgID, w.envID).Scan(&env); err != nil {
		return fmt.Errorf("compare-overview needs a second environment: %w", err)
	}
	if err := seed.InsertFlags(ctx, w.pool, seed.Flags{EnvID: env, Creator: w.creator, To: w.flags / 2}); err != nil {
		return err
	}
	if _, err := w.pool.Exec(ctx, `VACUUM ANALYZE feature_flags`); err != nil {
		return err
	}
	w.compareEnv = env
	return nil
}
