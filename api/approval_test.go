package api_test

import (
	"github.com/bunting-flags/bunting/sql/targeting"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// TestApprovalCoversEverythingServed walks, as a Developer, the routes that
// went around approval in Prod, whose changes need it: each answers 422
// ChangeRequestRequired and changes nothing, while the same changes in Dev,
// which needs no approval, succeed.
func TestApprovalCoversEverythingServed(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	p := s.createProject("Web", "web")
	prod, dev := p.Environments[0], p.Environments[1]
	prodFlags, devFlags := "/api/v1/envs/"+prod.ID.String()+"/feature-flags", "/api/v1/envs/"+dev.ID.String()+"/feature-flags"
	devSegs := "/api/v1/envs/" + dev.ID.String() + "/segments"
	dave, _ := s.addMember("dave@example.com", core.DeveloperPolicyID)

	// A shared segment managed from Dev; a flag in Prod serves true to its users.
	sg := decode[flagstore.Segment](t, s.do("POST", devSegs, s.owner, map[string]any{"name": "Staff", "key": "staff",
		"type": flagstore.SegmentShared, "scopes": []string{"organization/default-organization:project/web"}}).ok(t))
	pay := decode[flagstore.Flag](t, s.do("POST", prodFlags, s.owner, map[string]any{"name": "Pay", "key": "pay", "isEnabled": true}).ok(t))
	s.do("PUT", prodFlags+"/pay/targeting", s.owner, map[string]any{"targeting": map[string]any{"targetUsers": []any{},
		"rules": []any{map[string]any{"id": "r", "name": "Staff", "conditions": []any{map[string]any{"id": "c",
			"property": targeting.SegmentIn, "op": "", "value": `["` + sg.ID.String() + `"]`}}, "dispatchKey": nil, "includedInExpt": true,
			"variations": []any{map[string]any{"id": pay.Variations[0].ID, "rollout": []float64{0, 1}, "exptRollout": 1}}}},
		"fallthrough": map[string]any{"dispatchKey": nil, "includedInExpt": true,
			"variations": []any{map[string]any{"id": pay.Variations[1].ID, "rollout": []float64{0, 1}, "exptRollout": 1}}}}}).ok(t)
	pay = decode[flagstore.Flag](t, s.do("GET", prodFlags+"/pay", s.owner, nil).ok(t))
	s.do("POST", prodFlags, s.owner, map[string]any{"name": "Old", "key": "old"}).ok(t)
	s.do("PUT", prodFlags+"/old/archive", s.owner, nil).ok(t)
	banner := decode[flagstore.Flag](t, s.do("POST", devFlags, dave, map[string]any{"name": "Banner", "key": "banner", "isEnabled": true}).ok(t))
	s.requireApproval(prod, 1, s.userID(s.owner))

	refused := func(method, path string, body any) {
		t.Helper()
		s.do(method, path, dave, body).fails(t, http.StatusUnprocessableEntity, "ChangeRequestRequired")
	}
	refused("PUT", prodFlags+"/pay/archive", nil)
	refused("PUT", prodFlags+"/old/restore", nil)
	refused("DELETE", prodFlags+"/old", nil)
	refused("POST", prodFlags, map[string]any{"name": "Pay 2", "key": "pay-2", "isEnabled": true})
	refused("POST", prodFlags+"/clone/pay", map[string]any{"name": "Pay 3", "key": "pay-3"})
	refused("POST", devFlags+"/copy-to-env/"+prod.ID.String(), map[string]any{"flagIds": []uuid.UUID{banner.ID}})
	refused("PUT", devSegs+"/"+sg.ID.String()+"/targeting", map[string]any{"included": []string{"eve"}})
	refused("PATCH", devSegs+"/"+sg.ID.String(), []any{map[string]any{"op": "add", "path": "/included/-", "value": "eve"}})

	after := decode[flagstore.Flag](t, s.do("GET", prodFlags+"/pay", s.owner, nil).ok(t))
	if after.IsArchived || after.Revision != pay.Revision {
		t.Fatalf("pay after the refusals: archived %v, revision %v (was %v)", after.IsArchived, after.Revision, pay.Revision)
	}
	if n := s.count(`SELECT count(*) FROM feature_flags WHERE env_id = $1 AND NOT is_archived`, prod.ID); n != 1 {
		t.Fatalf("Prod holds %d live flags after the refusals, want 1", n)
	}
	if n := s.count(`SELECT count(*) FROM feature_flags WHERE env_id = $1 AND is_archived`, prod.ID); n != 1 {
		t.Fatalf("Prod holds %d archived flags after the refusals, want 1", n)
	}
	if got := decode[flagstore.Segment](t, s.do("GET", devSegs+"/"+sg.ID.String(), s.owner, nil).ok(t)); len(got.Included) != 0 {
		t.Fatalf("the segment after the refusals: %+v", got.Included)
	}

	// Where no approval is needed, nothing changes for the Developer.
	s.do("PUT", devFlags+"/banner/archive", dave, nil).ok(t)
	s.do("PUT", devFlags+"/banner/restore", dave, nil).ok(t)
	s.do("POST", devFlags+"/clone/banner", dave, map[string]any{"name": "Banner 2", "key": "banner-2"}).ok(t)
}
