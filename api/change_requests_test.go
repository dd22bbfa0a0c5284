package api_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
)

// qaRN names the matrix's environment whose changes need approval.
const qaRN = "project/web:env/qa"

// userID is the id of the user a session token belongs to.
func (s *server) userID(token string) uuid.UUID {
	s.t.Helper()
	p := decode[struct {
		ID uuid.UUID `json:"id"`
	}](s.t, s.do("GET", "/api/v1/user/profile", token, nil).ok(s.t))
	return p.ID
}

// requireApproval makes an environment need n approvals from members.
func (s *server) requireApproval(env core.Environment, n int, members ...uuid.UUID) {
	s.t.Helper()
	s.do("PUT", "/api/v1/projects/"+env.ProjectID.String()+"/envs/"+env.ID.String(), s.owner, map[string]any{
		"name": env.Name, "settings": map[string]any{"requireChangeComment": false, "changeRequest": map[string]any{
			"isEnabled": true, "approvalsRequired": n, "approverMemberIds": members, "approverGroupIds": []string{}}}}).ok(s.t)
}

// approvalEnv is the matrix project's environment "qa", whose changes need
// one approval from the owner or the member.
func (m *matrix) approvalEnv() core.Environment {
	if m.qa.ID == uuid.Nil {
		m.qa = decode[core.Environment](m.s.t, m.owner("POST", "/api/v1/projects/"+m.project.ID.String()+"/envs",
			map[string]string{"name": "QA", "key": "qa"}))
		m.s.requireApproval(m.qa, 1, m.s.userID(m.s.owner), m.memberID)
	}
	return m.qa
}

func (m *matrix) qaFlags() string {
	return "/api/v1/envs/" + m.approvalEnv().ID.String() + "/feature-flags"
}

// qaFlag makes a flag in qa, which needs approval: created by the owner
// with a change request the member reviews, approved behind the API (the
// member's rights change from case to case) and applied by the owner.
func (m *matrix) qaFlag(key string) {
	created := decode[flagstore.CreatedFlag](m.s.t, m.owner("POST", m.qaFlags(), map[string]any{"name": key, "key": key,
		"reason": "new flag", "reviewers": []uuid.UUID{m.memberID}}))
	id := created.PendingApproval.ChangeRequestID
	ctx := context.Background()
	must(m.s.t, m.s.pool.QueryRow(ctx, `UPDATE flag_change_request_reviewers SET action = 'Approve', decided_at = now()
		WHERE change_request_id = $1 RETURNING member_id`, id).Scan(new(uuid.UUID)))
	m.owner("PUT", m.qaFlags()+"/change-requests/"+id.String()+"/apply", nil)
}

// changeRequest makes a flag in qa and a request to turn it on by author,
// reviewed by reviewer, and returns the flag's key and the request's path.
func (m *matrix) changeRequest(author string, reviewer uuid.UUID) (string, string) {
	key := fmt.Sprintf("cr%d", m.next())
	m.qaFlag(key)
	m.s.do("POST", m.qaFlags()+"/"+key+"/change-requests", author, map[string]any{
		"isEnabled": true, "reason": "launch", "reviewers": []uuid.UUID{reviewer}}).ok(m.s.t)
	pending := decode[[]governance.PendingChange](m.s.t, m.owner("GET", m.qaFlags()+"/"+key+"/pending-changes", nil))
	return key, m.qaFlags() + "/change-requests/" + pending[len(pending)-1].ID.String()
}

// changeRequestCases are the permission cases of the change request routes:
// reading the environment is what they need beyond being the author or a
// reviewer; creating one needs the change's own actions too.
func (m *matrix) changeRequestCases(cases map[string]func() call) {
	qaFlag := func(key string) string { return qaRN + ":flag/" + key }
	review := func(suffix string) func() call {
		return func() call {
			_, path := m.changeRequest(m.s.owner, m.memberID)
			return call{path: path + suffix, body: map[string]string{"comment": "ok"}, grants: []grant{{access.CanAccessEnv, qaRN}}}
		}
	}
	cases["POST /api/v1/envs/:envId/feature-flags/:key/change-requests"] = func() call {
		key := fmt.Sprintf("cr%d", m.next())
		m.qaFlag(key)
		return call{path: m.qaFlags() + "/" + key + "/change-requests",
			body:   map[string]any{"isEnabled": true, "reason": "launch", "reviewers": []uuid.UUID{m.s.userID(m.s.owner)}},
			grants: []grant{{access.CanAccessEnv, qaRN}, {access.ToggleFlag, qaFlag(key)}}}
	}
	cases["PUT /api/v1/envs/:envId/feature-flags/change-requests/:id/approve"] = review("/approve")
	cases["PUT /api/v1/envs/:envId/feature-flags/change-requests/:id/decline"] = review("/decline")
	cases["PUT /api/v1/envs/:envId/feature-flags/change-requests/:id/apply"] = func() call {
		_, path := m.changeRequest(m.s.owner, m.memberID)
		id := path[len(path)-36:]
		ctx := context.Background()
		// Approved behind the API, by the member, its reviewer, whose
		// approval counts when it applies it: approvals are counted then.
		must(m.s.t, m.s.pool.QueryRow(ctx, `UPDATE flag_change_requests SET status = 'Approved' WHERE id = $1 RETURNING id`, id).Scan(new(uuid.UUID)))
		must(m.s.t, m.s.pool.QueryRow(ctx, `UPDATE flag_change_request_reviewers SET action = 'Approve', decided_at = now()
			WHERE change_request_id = $1 RETURNING member_id`, id).Scan(new(uuid.UUID)))
		return call{path: path + "/apply", grants: []grant{{access.CanAccessEnv, qaRN}}}
	}
	cases["DELETE /api/v1/envs/:envId/feature-flags/change-requests/:id"] = func() call {
		key := fmt.Sprintf("cr%d", m.next())
		m.qaFlag(key)
		// The member is the author: allowed to request it for this once.
		m.setStatements(statements([]grant{{access.CanAccessEnv, qaRN}, {access.ToggleFlag, qaFlag(key)}}, "allow"))
		m.s.do("POST", m.qaFlags()+"/"+key+"/change-requests", m.member, map[string]any{
			"isEnabled": true, "reason": "launch", "reviewers": []uuid.UUID{m.s.userID(m.s.owner)}}).ok(m.s.t)
		pending := decode[[]governance.PendingChange](m.s.t, m.owner("GET", m.qaFlags()+"/"+key+"/pending-changes", nil))
		return call{path: m.qaFlags() + "/change-requests/" + pending[0].ID.String(), grants: []grant{{access.CanAccessEnv, qaRN}}}
	}
}

// TestChangeRequestRoutes walks a change request through FeatBit's routes and
// answers: a direct change is refused, a request needs its approvals, its
// author cannot approve it, and applying it changes the flag once.
func TestChangeRequestRoutes(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	p := s.createProject("Web", "web")
	prod := p.Environments[0]
	flags := "/api/v1/envs/" + prod.ID.String() + "/feature-flags"
	s.do("POST", flags, s.owner, map[string]string{"name": "Pay", "key": "pay"}).ok(t)
	alice, aliceID := s.addMember("alice@example.com")
	bob, bobID := s.addMember("bob@example.com")
	carol, carolID := s.addMember("carol@example.com")
	s.changeAccess(`INSERT INTO member_policies (organization_id, user_id, policy_id)
		SELECT $1, u, (SELECT id FROM policies WHERE key = 'owner') FROM unnest($2::uuid[]) AS u`, s.orgID, []uuid.UUID{aliceID, bobID, carolID})

	// Before approval is required, a request is refused by name.
	s.do("POST", flags+"/pay/change-requests", alice, map[string]any{"isEnabled": true, "reason": "launch", "reviewers": []uuid.UUID{bobID}}).
		fails(t, http.StatusUnprocessableEntity, "ChangeRequestNotEnabled")
	s.requireApproval(prod, 2, aliceID, bobID, carolID)
	env := decode[core.Environment](t, s.do("GET", "/api/v1/projects/"+p.ID.String()+"/envs/"+prod.ID.String(), s.owner, nil).ok(t))
	if cr := env.Settings.ChangeRequest; cr == nil || !cr.IsEnabled || cr.ApprovalsRequired != 2 || len(cr.ApproverMemberIDs) != 3 {
		t.Fatalf("environment settings: %+v", env.Settings.ChangeRequest)
	}
	s.do("PUT", "/api/v1/projects/"+p.ID.String()+"/envs/"+prod.ID.String(), s.owner, map[string]any{"name": "Prod",
		"settings": map[string]any{"requireChangeComment": false, "changeRequest": map[string]any{"isEnabled": true, "approvalsRequired": 11, "approverMemberIds": []uuid.UUID{bobID}}}}).
		fails(t, http.StatusBadRequest, "approvalsRequired_is_invalid")

	// Direct changes to what the flag serves are refused, the owner's too.
	s.do("PUT", flags+"/pay/toggle/true", s.owner, nil).fails(t, http.StatusUnprocessableEntity, "ChangeRequestRequired")
	f := decode[flagstore.Flag](t, s.do("GET", flags+"/pay", s.owner, nil).ok(t))
	s.do("PUT", flags+"/pay/targeting", alice, map[string]any{"targeting": map[string]any{"targetUsers": []any{
		map[string]any{"variationId": f.Variations[0].ID, "keyIds": []string{"vip"}}}, "rules": []any{}, "fallthrough": f.Fallthrough}}).
		fails(t, http.StatusUnprocessableEntity, "ChangeRequestRequired")

	// FeatBit's body: {revision, targeting, reason, reviewers}.
	body := map[string]any{"revision": f.Revision, "reason": "VIPs first", "reviewers": []uuid.UUID{bobID, carolID},
		"targeting": map[string]any{"targetUsers": []any{map[string]any{"variationId": f.Variations[0].ID, "keyIds": []string{"vip"}}},
			"rules": []any{}, "fallthrough": f.Fallthrough, "exptIncludeAllTargets": true}}
	if ok := decode[bool](t, s.do("POST", flags+"/pay/change-requests", alice, body).ok(t)); !ok {
		t.Fatal("create answered false")
	}
	s.do("POST", flags+"/pay/change-requests", alice, map[string]any{"reason": "nothing", "reviewers": []uuid.UUID{bobID, carolID}}).
		fails(t, http.StatusBadRequest, "targeting_is_required")
	s.do("POST", flags+"/pay/change-requests", alice, map[string]any{"isEnabled": true, "reason": "x", "reviewers": []uuid.UUID{aliceID, bobID}}).
		fails(t, http.StatusBadRequest, "reviewers_is_invalid")

	pending := decode[[]governance.PendingChange](t, s.do("GET", flags+"/pay/pending-changes", bob, nil).ok(t))
	if len(pending) != 1 || pending[0].Type != "ChangeRequest" || pending[0].Status != "PendingReview" ||
		pending[0].ChangeRequestReason != "VIPs first" || len(pending[0].Reviewers) != 2 || pending[0].CreatorID != aliceID ||
		len(pending[0].Instructions) != 1 || pending[0].Instructions[0].Kind != "SetTargetUsers" {
		t.Fatalf("pending changes: %+v", pending)
	}
	cr := flags + "/change-requests/" + pending[0].ID.String()

	s.do("PUT", cr+"/approve", alice, nil).fails(t, http.StatusUnprocessableEntity, "CannotReviewOwnChangeRequest")
	s.do("PUT", cr+"/approve", s.owner, nil).fails(t, http.StatusUnprocessableEntity, "NotAReviewerOfChangeRequest")
	if ok := decode[bool](t, s.do("PUT", cr+"/approve", bob, map[string]string{"comment": "looks right"}).ok(t)); !ok {
		t.Fatal("approve answered false")
	}
	s.do("PUT", cr+"/apply", alice, nil).fails(t, http.StatusUnprocessableEntity, "ChangeRequestNotApproved")
	s.do("PUT", cr+"/approve", carol, nil).ok(t)
	if ok := decode[bool](t, s.do("PUT", cr+"/apply", alice, nil).ok(t)); !ok {
		t.Fatal("apply answered false")
	}
	after := decode[flagstore.Flag](t, s.do("GET", flags+"/pay", s.owner, nil).ok(t))
	if after.Revision == f.Revision || len(after.TargetUsers) != 1 || after.TargetUsers[0].KeyIDs[0] != "vip" {
		t.Fatalf("applied flag: revision %v (was %v), targets %+v", after.Revision, f.Revision, after.TargetUsers)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_id = $1 AND operation = 'ApplyFlagChangeRequest'`, f.ID.String()); n != 1 {
		t.Fatalf("history entries of the apply: %d", n)
	}
	s.do("PUT", cr+"/apply", alice, nil).fails(t, http.StatusUnprocessableEntity, "ChangeRequestAlreadyApplied")
	if pending := decode[[]governance.PendingChange](t, s.do("GET", flags+"/pay/pending-changes", bob, nil).ok(t)); len(pending) != 0 {
		t.Fatalf("applied request still pending: %+v", pending)
	}

	// Declined: cannot be applied; withdrawn by its author only.
	s.do("POST", flags+"/pay/change-requests", alice, map[string]any{"isEnabled": true, "reason": "launch", "reviewers": []uuid.UUID{bobID, carolID}}).ok(t)
	pending = decode[[]governance.PendingChange](t, s.do("GET", flags+"/pay/pending-changes", bob, nil).ok(t))
	cr = flags + "/change-requests/" + pending[0].ID.String()
	s.do("PUT", cr+"/decline", bob, map[string]string{"comment": "not today"}).ok(t)
	s.do("PUT", cr+"/apply", alice, nil).fails(t, http.StatusUnprocessableEntity, "ChangeRequestDeclined")
	s.do("DELETE", cr, bob, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("DELETE", cr, alice, nil).ok(t)
	s.do("PUT", cr+"/approve", carol, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("PUT", flags+"/change-requests/not-a-uuid/approve", carol, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("PUT", cr+"/apply", alice, map[string]string{"unknown": "x"}).fails(t, http.StatusBadRequest, "body_is_invalid")
}

// A flag may be keyed "change-requests": its routes still reach it, beside
// the routes of change requests.
func TestFlagKeyedChangeRequests(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	e := s.prodEnv()
	e.createFlag(map[string]any{"name": "Change requests", "key": "change-requests"})
	s.do("GET", e.flags+"/change-requests", s.owner, nil).ok(t)
	s.do("GET", e.flags+"/change-requests/pending-changes", s.owner, nil).ok(t)
	s.do("PUT", e.flags+"/change-requests/toggle/true", s.owner, nil).ok(t)
	s.do("PUT", e.flags+"/change-requests/archive", s.owner, nil).ok(t)
}
