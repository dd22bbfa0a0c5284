package iam

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/seed"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// TestPolicyMemberSearchesFindWhatOneStatementFinds: a search of a policy's
// members answers what SearchPolicyMembers and its count find, whether the
// text is rare (found among the users matching it first) or shared by more
// users than that step takes (searched in one statement).
func TestPolicyMemberSearchesFindWhatOneStatementFinds(t *testing.T) {
	s, a, pool := testStore(t)
	ctx := context.Background()
	p, err := s.CreatePolicy(ctx, a, PolicyInput{Name: "Team", Key: "team"})
	must(t, err)
	const members = maxEmailMatches + 200
	_, err = seed.InsertMembers(ctx, pool, seed.Organization{WorkspaceID: a.WorkspaceID, OrgID: a.OrgID, Members: members,
		Groups: 20, Domain: "acme", BasePolicy: core.DeveloperPolicyID, Policy: p.ID})
	must(t, err)
	_, err = pool.Exec(ctx, `ANALYZE`)
	must(t, err)
	for _, f := range []IAMFilter{
		{Search: ".0004", Page: core.Page{Size: 10}},           // ten members, one holding the policy
		{Search: ".0004", All: true, Page: core.Page{Size: 4}}, // all ten, marked
		{Search: ".0004", All: true, Page: core.Page{Index: 1, Size: 4}},
		{Search: "acme", Page: core.Page{Index: 3, Size: 10}},  // every member's domain: more than the first step takes
		{Search: "acme", All: true, Page: core.Page{Size: 10}}, //
		{Search: ".0004", Page: core.Page{Index: 5, Size: 10}}, // past the last match
		{Search: "nobody", Page: core.Page{Size: 10}},
	} {
		got, err := s.ListPolicyMembers(ctx, a, p.ID, f)
		must(t, err)
		search := core.EscapeLike(f.Search)
		rows, err := s.core.Q.SearchPolicyMembers(ctx, db.SearchPolicyMembersParams{OrganizationID: a.OrgID, PolicyID: p.ID,
			Search: search, GetAll: f.All, PageSize: f.Page.Limit(), PageOffset: f.Page.Offset()})
		must(t, err)
		total, err := s.core.Q.CountSearchPolicyMembers(ctx, db.CountSearchPolicyMembersParams{OrganizationID: a.OrgID, PolicyID: p.ID,
			Search: search, GetAll: f.All})
		must(t, err)
		want := core.Paged[PolicyMember]{TotalCount: total, Items: []PolicyMember{}}
		for _, r := range rows {
			m, _ := policyMemberOf(r)
			want.Items = append(want.Items, m)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: got %d %v, want %d %v", f, got.TotalCount, got.Items, want.TotalCount, want.Items)
		}
	}
}

// TestPolicyMemberPagesKeepTheirPlan guards PolicyMembersAmong's shape: after
// a few searches PostgreSQL runs it on a generic plan, instead of planning
// each call (which cost more than the search it saved).
func TestPolicyMemberPagesKeepTheirPlan(t *testing.T) {
	s, a, pool := testStore(t)
	ctx := context.Background()
	p, err := s.CreatePolicy(ctx, a, PolicyInput{Name: "Team", Key: "team"})
	must(t, err)
	_, err = seed.InsertMembers(ctx, pool, seed.Organization{WorkspaceID: a.WorkspaceID, OrgID: a.OrgID, Members: 200,
		Groups: 20, Domain: "acme", BasePolicy: core.DeveloperPolicyID, Policy: p.ID})
	must(t, err)
	_, err = pool.Exec(ctx, `ANALYZE`)
	must(t, err)
	// One connection, so what it has prepared is everything the store ran.
	cfg := pool.Config().Copy()
	cfg.MaxConns, cfg.MinConns = 1, 0
	one, err := pgxpool.NewWithConfig(ctx, cfg)
	must(t, err)
	defer one.Close()
	single := New(core.New(one, s.core.ServerKeys, slog.New(slog.DiscardHandler), core.Options{PasswordCost: 4}))
	for i := range 10 {
		// ".0001" and the like: ten members each.
		page, err := single.ListPolicyMembers(ctx, a, p.ID, IAMFilter{Search: fmt.Sprintf(".%04d", i+1), All: i%2 == 0, Page: core.Page{Size: 10}})
		if err != nil || page.TotalCount == 0 {
			t.Fatalf("search %d: %v, %d found", i, err, page.TotalCount)
		}
	}
	var generic, custom int64
	must(t, one.QueryRow(ctx, `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '%%PolicyMembersAmong%%'`,
		pgx.QueryExecModeSimpleProtocol).Scan(&generic, &custom))
	if generic == 0 {
		t.Errorf("PolicyMembersAmong was planned for each of %d calls, never generically", custom)
	}
}
