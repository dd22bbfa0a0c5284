package workplace_test

import (
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/seamtest"
	"github.com/bunting-flags/bunting/sql/store/workplace"
)

// TestFrameShowsWhatThePlaceRead: the frame of a page, drawn from its place,
// lists every project the person may open (one without an environment too)
// and the working environment with its own secrets, whether the place's
// statement guessed that environment or not.
func TestFrameShowsWhatThePlaceRead(t *testing.T) {
	ctx := t.Context()
	c, ids, a, pool := seamtest.Owner(t)
	w := workplace.New(c)
	shop, err := c.CreateProject(ctx, a, core.ProjectInput{Name: "Shop", Key: "shop"})
	seamtest.Must(t, err)
	bare, err := c.CreateProject(ctx, a, core.ProjectInput{Name: "Bare", Key: "bare"})
	seamtest.Must(t, err)
	_, err = pool.Exec(ctx, `DELETE FROM environments WHERE project_id = $1`, bare.ID)
	seamtest.Must(t, err)
	all, err := c.ListProjects(ctx, a)
	seamtest.Must(t, err)
	if len(shop.Environments) < 2 {
		t.Fatalf("a new project has %d environments, the test needs two", len(shop.Environments))
	}
	secretsOf := func(envID uuid.UUID) []core.Secret {
		for _, pr := range all {
			for _, e := range pr.Environments {
				if e.ID == envID {
					return e.Secrets
				}
			}
		}
		t.Fatalf("no environment %s", envID)
		return nil
	}

	for _, tc := range []struct {
		name    string
		context core.UserContext
		want    uuid.UUID
	}{
		{"none remembered: the very first", core.UserContext{}, all[0].Environments[0].ID},
		{"remembered", core.UserContext{EnvID: shop.Environments[1].ID}, shop.Environments[1].ID},
		{"the remembered project's first", core.UserContext{ProjectID: shop.ID}, shop.Environments[0].ID},
		{"remembered, since gone: the very first", core.UserContext{EnvID: uuid.New()}, all[0].Environments[0].ID},
	} {
		f, err := w.FrameAt(ctx, iam.PageSession{Actor: a, Context: tc.context})
		seamtest.Must(t, err)
		if f.Env == nil || f.Env.ID != tc.want {
			t.Errorf("%s: works in %+v, want %s", tc.name, f.Env, tc.want)
			continue
		}
		if got, want := f.Env.Secrets, secretsOf(tc.want); len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s: the working environment's secrets %v, want %v", tc.name, got, want)
		}
		var names []string
		for _, pr := range f.Projects {
			names = append(names, pr.Name)
			if pr.ID == bare.ID && len(pr.Environments) != 0 {
				t.Errorf("%s: the bare project shows environments %v", tc.name, pr.Environments)
			}
		}
		if len(f.Projects) != len(all) || !slices.Contains(names, "Bare") || !slices.Contains(names, "Shop") {
			t.Errorf("%s: the frame's projects %v, want all %d, the bare one too", tc.name, names, len(all))
		}
	}

	// A member who may open the projects but only Shop's first environment
	// sees every other project without environments, though each has some
	// (so the place's rows name every project).
	_, err = pool.Exec(ctx, `DELETE FROM projects WHERE id = $1`, bare.ID)
	seamtest.Must(t, err)
	_, err = c.CreateProject(ctx, a, core.ProjectInput{Name: "Other", Key: "other"})
	seamtest.Must(t, err)
	all, err = c.ListProjects(ctx, a)
	seamtest.Must(t, err)
	member, err := ids.AddMember(ctx, a, iam.MemberInput{Email: "ann@example.com"})
	seamtest.Must(t, err)
	seamtest.Must(t, ids.RemoveMemberPolicy(ctx, a, member.ID, core.DeveloperPolicyID))
	policy, err := ids.CreatePolicy(ctx, a, iam.PolicyInput{Name: "Shop first", Key: "shop-first"})
	seamtest.Must(t, err)
	_, err = ids.UpdatePolicyStatements(ctx, a, policy.ID, []access.Statement{
		{ID: "p", ResourceType: access.TypeProject, Effect: "allow", Actions: []string{string(access.CanAccessProject)}, Resources: []string{"project/*"}},
		{ID: "e", ResourceType: access.TypeEnv, Effect: "allow", Actions: []string{string(access.CanAccessEnv)},
			Resources: []string{"project/shop:env/" + shop.Environments[0].Key}},
	})
	seamtest.Must(t, err)
	seamtest.Must(t, ids.AddMemberPolicy(ctx, a, member.ID, policy.ID))
	ann, err := ids.UserActor(ctx, member.ID, a.WorkspaceID.String(), a.OrgID.String())
	seamtest.Must(t, err)
	f, err := w.FrameAt(ctx, iam.PageSession{Actor: ann, Context: core.UserContext{EnvID: shop.Environments[1].ID}})
	seamtest.Must(t, err)
	if f.Env == nil || f.Env.ID != shop.Environments[0].ID || !slices.Equal(f.Env.Secrets, secretsOf(f.Env.ID)) {
		t.Errorf("Ann works in %+v, want Shop's first environment with its secrets", f.Env)
	}
	if len(f.Projects) != len(all) {
		t.Errorf("Ann's frame lists %d projects, want all %d", len(f.Projects), len(all))
	}
	for _, pr := range f.Projects {
		if want := map[bool]int{true: 1, false: 0}[pr.ID == shop.ID]; len(pr.Environments) != want {
			t.Errorf("Ann sees %d environments of %s, want %d", len(pr.Environments), pr.Name, want)
		}
	}
}
