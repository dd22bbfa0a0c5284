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
