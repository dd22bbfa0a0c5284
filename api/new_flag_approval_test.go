package api_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagcopy"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
)

// TestNewFlagAnswersNameTheirChangeRequest: where changes need approval, a
// Developer's create, clone and copy-to-env with a reason and reviewers
// answer (as api/openapi.yaml says) the new flag archived with
// pendingApproval, the change request the owner then finds waiting for
// them; a reviewer who may not approve there is refused, nothing stored.
// In Dev the same bodies answer as FeatBit does, the reason and reviewers
// ignored.
func TestNewFlagAnswersNameTheirChangeRequest(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	p := s.createProject("Web", "web")
	prod, dev := p.Environments[0], p.Environments[1]
	prodFlags, devFlags := "/api/v1/envs/"+prod.ID.String()+"/feature-flags", "/api/v1/envs/"+dev.ID.String()+"/feature-flags"
	dave, daveID := s.addMember("dave@example.com", core.DeveloperPolicyID)
	ownerID := s.userID(s.owner)
	s.requireApproval(prod, 1, ownerID)
	req := func(body map[string]any, reviewers ...uuid.UUID) map[string]any {
		body["reason"], body["reviewers"] = "new checkout", reviewers
		return body
	}

	s.do("POST", prodFlags, dave, req(map[string]any{"name": "Pay", "key": "pay"}, daveID)).fails(t, http.StatusBadRequest, "reviewers_is_invalid")
	created := decode[flagstore.CreatedFlag](t, s.do("POST", prodFlags, dave, req(map[string]any{"name": "Pay", "key": "pay"}, ownerID)).ok(t))
	if created.PendingApproval == nil || !created.IsArchived || created.IsEnabled || created.PendingApproval.Key != "pay" {
		t.Fatalf("create answer %+v", created)
	}
	cloned := decode[flagstore.CreatedFlag](t, s.do("POST", prodFlags+"/clone/pay", dave, req(map[string]any{"name": "Pay 2", "key": "pay-2"}, ownerID)).ok(t))
	if cloned.PendingApproval == nil || !cloned.IsArchived {
		t.Fatalf("clone answer %+v", cloned)
	}
	banner := decode[flagstore.Flag](t, s.do("POST", devFlags, dave, req(map[string]any{"name": "Banner", "key": "banner"}, ownerID)).ok(t))
	if banner.IsArchived {
		t.Fatalf("in Dev, which needs no approval, the flag came in archived: %+v", banner)
	}
	if got := decode[bool](t, s.do("POST", devFlags+"/clone/banner", dave, req(map[string]any{"name": "Banner 2", "key": "banner-2"}, ownerID)).ok(t)); !got {
		t.Fatal("clone in Dev answers true, as FeatBit does")
	}
	copied := decode[flagcopy.CopyToEnvResult](t, s.do("POST", devFlags+"/copy-to-env/"+prod.ID.String(), dave,
		req(map[string]any{"flagIds": []uuid.UUID{banner.ID}}, ownerID)).ok(t))
	if copied.CopiedCount != 1 || len(copied.PendingApproval) != 1 || copied.PendingApproval[0].Key != "banner" {
		t.Fatalf("copy answer %+v", copied)
	}

	waiting := decode[[]governance.PendingChange](t, s.do("GET", prodFlags+"/pay/pending-changes", s.owner, nil).ok(t))
	if len(waiting) != 1 || waiting[0].ChangeRequestID == nil || *waiting[0].ChangeRequestID != created.PendingApproval.ChangeRequestID {
		t.Fatalf("pay's pending changes %+v", waiting)
	}
	if n := s.count(`SELECT count(*) FROM feature_flags WHERE env_id = $1 AND NOT is_archived`, prod.ID); n != 0 {
		t.Fatalf("Prod holds %d flags SDKs are served before any approval", n)
	}
}

// TestDeclinedOrWithdrawnNewFlagIsRemoved: where changes need approval, a
// new flag whose change request is declined, or withdrawn by its author,
// is gone (GET 404), its key free for a flag with a new request, and the
// environment's history says what happened; a pending flag cannot be
// restored or deleted around its request, also once approval is turned
// off (422 FlagAwaitsApproval). Approved and applied, a flag of that key
// comes in as before.
func TestDeclinedOrWithdrawnNewFlagIsRemoved(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	prod := s.createProject("Web", "web").Environments[0]
	flags := "/api/v1/envs/" + prod.ID.String() + "/feature-flags"
	dave, _ := s.addMember("dave@example.com", core.DeveloperPolicyID)
	ownerID := s.userID(s.owner)
	s.requireApproval(prod, 1, ownerID)
	create := func(reason string) flagstore.CreatedFlag {
		t.Helper()
		f := decode[flagstore.CreatedFlag](t, s.do("POST", flags, dave, map[string]any{"name": "Pay", "key": "pay",
			"reason": reason, "reviewers": []uuid.UUID{ownerID}}).ok(t))
		if f.PendingApproval == nil || !f.IsArchived {
			t.Fatalf("created %+v, want it pending", f)
		}
		return f
	}
	removal := func(f flagstore.CreatedFlag, how string) int {
		return s.count(`SELECT count(*) FROM audit_logs WHERE ref_type = 'FeatureFlag' AND ref_id = $1 AND operation = 'Remove'
			AND comment = $2`, f.ID.String(), "New flag pay was "+how+" and removed")
	}

	// Declined by the owner: gone, with the decline and the removal in history.
	first := create("new checkout")
	cr := flags + "/change-requests/" + first.PendingApproval.ChangeRequestID.String()
	s.do("PUT", flags+"/pay/restore", s.owner, nil).fails(t, http.StatusUnprocessableEntity, "ChangeRequestRequired")
	s.do("DELETE", flags+"/pay", s.owner, nil).fails(t, http.StatusUnprocessableEntity, "ChangeRequestRequired")
	s.do("PUT", cr+"/decline", s.owner, map[string]string{"comment": "not this quarter"}).ok(t)
	s.do("GET", flags+"/pay", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("PUT", cr+"/approve", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	if n := removal(first, "declined"); n != 1 {
		t.Fatalf("history entries of the declined flag's removal: %d", n)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_type = 'FlagChangeRequest' AND ref_id = $1 AND operation = 'Update'
		AND current::text LIKE '%declined (not this quarter)%'`, first.PendingApproval.ChangeRequestID.String()); n != 1 {
		t.Fatalf("history entries of the decline: %d", n)
	}
	if used := decode[bool](t, s.do("GET", flags+"/is-key-used?key=pay", dave, nil).ok(t)); used {
		t.Fatal("the declined flag's key is still taken")
	}

	// Created again with a new request, then withdrawn by its author: gone.
	second := create("new checkout, again")
	if second.ID == first.ID || second.PendingApproval.ChangeRequestID == first.PendingApproval.ChangeRequestID {
		t.Fatalf("the key's second flag reuses the first's ids: %+v", second)
	}
	s.do("DELETE", flags+"/change-requests/"+second.PendingApproval.ChangeRequestID.String(), s.owner, nil).
		fails(t, http.StatusForbidden, "Forbidden")
	s.do("DELETE", flags+"/change-requests/"+second.PendingApproval.ChangeRequestID.String(), dave, nil).ok(t)
	s.do("GET", flags+"/pay", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	if n := removal(second, "withdrawn"); n != 1 {
		t.Fatalf("history entries of the withdrawn flag's removal: %d", n)
	}

	// Approved and applied: the third comes in as it always did.
	third := create("new checkout, third time")
	cr = flags + "/change-requests/" + third.PendingApproval.ChangeRequestID.String()
	s.do("PUT", cr+"/approve", s.owner, nil).ok(t)
	s.do("PUT", cr+"/apply", dave, nil).ok(t)
	if f := decode[flagstore.Flag](t, s.do("GET", flags+"/pay", s.owner, nil).ok(t)); f.ID != third.ID || f.IsArchived {
		t.Fatalf("approved and applied, pay is %+v", f)
	}
	if n := s.count(`SELECT count(*) FROM feature_flags WHERE env_id = $1`, prod.ID); n != 1 {
		t.Fatalf("Prod holds %d flags, want only the approved one", n)
	}

	// Approval turned off while a new flag waits: it is still its request's.
	ship := decode[flagstore.CreatedFlag](t, s.do("POST", flags, dave, map[string]any{"name": "Ship", "key": "ship",
		"reason": "launch", "reviewers": []uuid.UUID{ownerID}}).ok(t))
	s.do("PUT", "/api/v1/projects/"+prod.ProjectID.String()+"/envs/"+prod.ID.String(), s.owner, map[string]any{
		"name": prod.Name, "settings": map[string]any{"requireChangeComment": false, "changeRequest": map[string]any{
			"isEnabled": false, "approvalsRequired": 1, "approverMemberIds": []uuid.UUID{ownerID}, "approverGroupIds": []string{}}}}).ok(t)
	s.do("PUT", flags+"/ship/restore", s.owner, nil).fails(t, http.StatusUnprocessableEntity, "FlagAwaitsApproval")
	s.do("DELETE", flags+"/ship", s.owner, nil).fails(t, http.StatusUnprocessableEntity, "FlagAwaitsApproval")
	s.do("PUT", flags+"/change-requests/"+ship.PendingApproval.ChangeRequestID.String()+"/decline", s.owner, nil).ok(t)
	s.do("GET", flags+"/ship", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
}
