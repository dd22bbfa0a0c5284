package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/cmd/internal/server"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagcopy"
	"github.com/bunting-flags/bunting/sql/store/flagsascode"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

const evilURL = "https://evil.example/pay"

// approvalSite is a project of two environments over the whole server:
// Prod, whose changes need one approval from bob, and Dev, which needs
// none; dave is a Developer.
type approvalSite struct {
	*site
	prod, dev core.Environment
	dave, bob string // Authorization header values
	bobID     uuid.UUID
}

func newApprovalSite(t *testing.T) *approvalSite {
	t.Helper()
	s := newSite(t)
	s.listen()
	ctx := context.Background()
	owner := s.ownerActor()
	p, err := s.st.Projects().CreateProject(ctx, owner, core.ProjectInput{Name: "Shop", Key: "shop"})
	must(t, err)
	as := &approvalSite{site: s, prod: p.Environments[0], dev: p.Environments[1]}
	member := func(email string, policy uuid.UUID) (string, uuid.UUID) {
		m, err := s.st.IAM().AddMember(ctx, owner, iam.MemberInput{Email: email, PolicyIDs: []uuid.UUID{policy}})
		must(t, err)
		session, err := s.st.IAM().Login(ctx, iam.LoginInput{Email: email, Password: *m.InitialPassword}, "192.0.2.1")
		must(t, err)
		return "Bearer " + session.Token, session.UserID
	}
	as.dave, _ = member("dave@example.com", core.DeveloperPolicyID)
	as.bob, as.bobID = member("bob@example.com", core.OwnerPolicyID)
	_, err = s.st.Projects().UpdateEnvironment(ctx, owner, as.prod.ProjectID, as.prod.ID, core.EnvironmentInput{Name: as.prod.Name,
		Settings: &core.EnvSettings{ChangeRequest: &core.ChangeRequestSettings{IsEnabled: true, ApprovalsRequired: 1,
			ApproverMemberIDs: []uuid.UUID{as.bobID}}}})
	must(t, err)
	return as
}

// api calls the management API as who and returns the envelope's data,
// failing the test unless the answer is want.
func (as *approvalSite) api(h *echo.Echo, who, method, path string, body any, want int) json.RawMessage {
	as.t.Helper()
	b, err := json.Marshal(body)
	must(as.t, err)
	rec := send(h, method, path, string(b), "Authorization", who, "Content-Type", "application/json")
	var env struct {
		Errors []string        `json:"errors"`
		Data   json.RawMessage `json:"data"`
	}
	if rec.Code != want || json.Unmarshal(rec.Body.Bytes(), &env) != nil {
		as.t.Fatalf("%s %s: %d %s, want %d", method, path, rec.Code, rec.Body, want)
	}
	return env.Data
}

// served is what a fresh SDK of env gets for key: OFREP's answer (status,
// value, reason) and the flag in the server SDK's data-sync (nil when it is
// not there); a client SDK's data-sync must give the value OFREP gives. A
// new server each time, so nothing cached decides.
func (as *approvalSite) served(env core.Environment, key string) (status int, value, reason string, inPayload *flagstore.Flag) {
	as.t.Helper()
	h := as.handler(server.Config{}, slog.New(slog.DiscardHandler))
	rec := send(h, "POST", "/ofrep/v1/evaluate/flags/"+key, `{"context":{"targetingKey":"u1"}}`,
		"Authorization", secret(env, core.SecretServer), "Content-Type", "application/json")
	var ans struct {
		Value  any    `json:"value"`
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &ans)
	if ans.Value != nil {
		value = fmt.Sprint(ans.Value)
	}
	payload := send(h, "GET", "/api/public/sdk/server/latest-all", "", "Authorization", secret(env, core.SecretServer))
	var sync struct {
		Data struct {
			FeatureFlags []flagstore.Flag `json:"featureFlags"`
		} `json:"data"`
	}
	if payload.Code != http.StatusOK || json.Unmarshal(payload.Body.Bytes(), &sync) != nil {
		as.t.Fatalf("server data-sync: %d %s", payload.Code, payload.Body)
	}
	for i, f := range sync.Data.FeatureFlags {
		if f.Key == key {
			inPayload = &sync.Data.FeatureFlags[i]
		}
	}
	// A client SDK is given no variation of a flag it may not have, as of
	// an archived one; otherwise what OFREP answers.
	client := send(h, "POST", "/api/public/sdk/client/latest-all?timestamp=0", `{"keyId":"u1"}`,
		"Authorization", secret(env, core.SecretClient), "Content-Type", "application/json")
	var csync struct {
		Data struct {
			FeatureFlags []struct {
				ID        string  `json:"id"`
				Variation *string `json:"variation"`
			} `json:"featureFlags"`
		} `json:"data"`
	}
	if client.Code != http.StatusOK || json.Unmarshal(client.Body.Bytes(), &csync) != nil {
		as.t.Fatalf("client data-sync: %d %s", client.Code, client.Body)
	}
	gets := ""
	for _, f := range csync.Data.FeatureFlags {
		if f.ID == key && f.Variation != nil {
			gets = *f.Variation
		}
	}
	if gets != value {
		as.t.Fatalf("%s: the client SDK gets %q, OFREP %q", key, gets, value)
	}
	return rec.Code, value, ans.Reason, inPayload
}

// notServed fails unless SDKs of env get nothing of key: OFREP answers
// FLAG_NOT_FOUND, and the server data-sync has it archived or not at all.
func (as *approvalSite) notServed(env core.Environment, key string) {
	as.t.Helper()
	status, value, _, f := as.served(env, key)
	if status != http.StatusNotFound || value != "" || (f != nil && !f.IsArchived) {
		as.t.Fatalf("%s is served before approval: OFREP %d %q, server data-sync %+v", key, status, value, f)
	}
}

// servesOff fails unless SDKs of env get key's off variation, evilURL.
func (as *approvalSite) servesOff(env core.Environment, key string) {
	as.t.Helper()
	status, value, reason, f := as.served(env, key)
	if status != http.StatusOK || value != evilURL || reason != "DISABLED" || f == nil || f.IsArchived || f.IsEnabled {
		as.t.Fatalf("%s: OFREP %d %q %s, server data-sync %+v; want %q, DISABLED", key, status, value, reason, f, evilURL)
	}
}

// offFlag is a string flag, off, whose off variation is evilURL.
func offFlag(key string) map[string]any {
	return map[string]any{"name": key, "key": key, "variationType": "string", "isEnabled": false,
		"variations": []map[string]string{{"id": "safe", "name": "Safe", "value": "https://pay.example/"},
			{"id": "evil", "name": "Evil", "value": evilURL}},
		"enabledVariationId": "safe", "disabledVariationId": "evil"}
}

// approve has bob approve and apply change request id of env.
func (as *approvalSite) approve(h *echo.Echo, env core.Environment, id uuid.UUID) {
	as.t.Helper()
	base := "/api/v1/envs/" + env.ID.String() + "/feature-flags/change-requests/" + id.String()
	as.api(h, as.bob, "PUT", base+"/approve", map[string]string{"comment": "ok"}, http.StatusOK)
	as.api(h, as.bob, "PUT", base+"/apply", nil, http.StatusOK)
}

// checkRequest fails unless the flag key of env has change request id
// among its pending changes (the API's pending-changes), waiting for bob's
// review, with the flag coming in.
func (as *approvalSite) checkRequest(h *echo.Echo, env core.Environment, id uuid.UUID, key string) {
	as.t.Helper()
	var pending []struct {
		ChangeRequestID *uuid.UUID `json:"changeRequestId"`
		Status          string     `json:"status"`
		Changed         []string   `json:"changed"`
		Reviewers       []struct {
			MemberID uuid.UUID `json:"memberId"`
		} `json:"reviewers"`
	}
	must(as.t, json.Unmarshal(as.api(h, as.bob, "GET", "/api/v1/envs/"+env.ID.String()+"/feature-flags/"+key+"/pending-changes", nil,
		http.StatusOK), &pending))
	if len(pending) != 1 || pending[0].ChangeRequestID == nil || *pending[0].ChangeRequestID != id ||
		pending[0].Status != flagstore.ChangeRequestPendingReview || len(pending[0].Reviewers) != 1 || pending[0].Reviewers[0].MemberID != as.bobID ||
		!slices.Contains(pending[0].Changed, "archived state") {
		as.t.Fatalf("%s's pending changes: %+v, want change request %s waiting for bob", key, pending, id)
	}
}

// TestNewFlagsWaitForApprovalEverywhere: the attack of a Developer in an
// environment whose changes need approval: a flag created, cloned, copied
// in or imported switched off, its off variation set to what they want
// served. Without a change request each is refused (422
// ChangeRequestRequired); with one, the flag is not served by OFREP, the
// client data-sync nor live in the server data-sync until bob approves it, then it serves its
// off variation. In Dev, which needs no approval, it is served at once.
func TestNewFlagsWaitForApprovalEverywhere(t *testing.T) {
	t.Parallel()
	as := newApprovalSite(t)
	h := as.handler(server.Config{}, slog.New(slog.DiscardHandler))
	prodFlags, devFlags := "/api/v1/envs/"+as.prod.ID.String()+"/feature-flags", "/api/v1/envs/"+as.dev.ID.String()+"/feature-flags"
	request := map[string]any{"reason": "new payment page", "reviewers": []uuid.UUID{as.bobID}}
	with := func(body map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range body {
			out[k] = v
		}
		for k, v := range request {
			out[k] = v
		}
		return out
	}

	// Dev needs no approval: served at once, and the source of the copy.
	var src flagstore.Flag
	must(t, json.Unmarshal(as.api(h, as.dave, "POST", devFlags, offFlag("pay-url"), http.StatusOK), &src))
	as.servesOff(as.dev, "pay-url")

	// Without a change request, every way in is refused and stores nothing.
	as.api(h, as.dave, "POST", prodFlags, offFlag("created"), http.StatusUnprocessableEntity)
	as.api(h, as.dave, "POST", devFlags+"/copy-to-env/"+as.prod.ID.String(), map[string]any{"flagIds": []uuid.UUID{src.ID}},
		http.StatusUnprocessableEntity)
	as.notServed(as.prod, "created")
	as.notServed(as.prod, "pay-url")

	// Created.
	var created flagstore.CreatedFlag
	must(t, json.Unmarshal(as.api(h, as.dave, "POST", prodFlags, with(offFlag("created")), http.StatusOK), &created))
	if created.PendingApproval == nil || !created.IsArchived {
		t.Fatalf("the answer does not say a change request was made: %+v", created)
	}
	as.notServed(as.prod, "created")
	as.checkRequest(h, as.prod, created.PendingApproval.ChangeRequestID, "created")

	// Cloned from it: refused without a request, pending with one.
	as.approve(h, as.prod, created.PendingApproval.ChangeRequestID)
	as.servesOff(as.prod, "created")
	as.api(h, as.dave, "POST", prodFlags+"/clone/created", map[string]any{"name": "Cloned", "key": "cloned"}, http.StatusUnprocessableEntity)
	var cloned flagstore.CreatedFlag
	must(t, json.Unmarshal(as.api(h, as.dave, "POST", prodFlags+"/clone/created", with(map[string]any{"name": "Cloned", "key": "cloned"}),
		http.StatusOK), &cloned))
	if cloned.PendingApproval == nil {
		t.Fatalf("clone answer: %+v", cloned)
	}
	as.notServed(as.prod, "cloned")
	as.checkRequest(h, as.prod, cloned.PendingApproval.ChangeRequestID, "cloned")
	as.approve(h, as.prod, cloned.PendingApproval.ChangeRequestID)
	as.servesOff(as.prod, "cloned")

	// Copied in from Dev.
	var copied flagcopy.CopyToEnvResult
	must(t, json.Unmarshal(as.api(h, as.dave, "POST", devFlags+"/copy-to-env/"+as.prod.ID.String(),
		with(map[string]any{"flagIds": []uuid.UUID{src.ID}}), http.StatusOK), &copied))
	if copied.CopiedCount != 1 || len(copied.PendingApproval) != 1 {
		t.Fatalf("copy answer: %+v", copied)
	}
	as.notServed(as.prod, "pay-url")
	as.checkRequest(h, as.prod, copied.PendingApproval[0].ChangeRequestID, "pay-url")
	as.approve(h, as.prod, copied.PendingApproval[0].ChangeRequestID)
	as.servesOff(as.prod, "pay-url")

	// Imported: a file of the Dev flag under another key, off, then on.
	var doc flagsascode.Document
	rec := send(h, "GET", "/api/v1/envs/"+as.dev.ID.String()+"/export", "", "Authorization", as.dave)
	var exported struct {
		Data flagsascode.Document `json:"data"`
	}
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &exported) != nil {
		t.Fatalf("export: %d %s", rec.Code, rec.Body)
	}
	doc = exported.Data
	doc.Flags[0].Key, doc.Flags[0].Name = "imported", "Imported"
	onFlag := doc.Flags[0]
	onFlag.Key, onFlag.Name, onFlag.IsEnabled = "imported-on", "Imported on", true
	doc.Flags = append(doc.Flags, onFlag)
	imports := "/api/v1/envs/" + as.prod.ID.String() + "/import"
	as.api(h, as.dave, "POST", imports, doc, http.StatusBadRequest) // no reviewers
	var plan flagsascode.ImportPlan
	must(t, json.Unmarshal(as.api(h, as.dave, "POST", imports+"?reason=release&reviewers="+as.bobID.String(), doc, http.StatusOK), &plan))
	if len(plan.PendingApproval) != 2 || !slices.ContainsFunc(plan.PendingApproval, func(r flagstore.RequestedChange) bool { return r.Key == "imported" }) {
		t.Fatalf("import plan: %+v", plan)
	}
	as.notServed(as.prod, "imported")
	as.notServed(as.prod, "imported-on")
	for _, r := range plan.PendingApproval {
		as.checkRequest(h, as.prod, r.ChangeRequestID, r.Key)
		as.approve(h, as.prod, r.ChangeRequestID)
	}
	as.servesOff(as.prod, "imported")
	if status, value, reason, _ := as.served(as.prod, "imported-on"); status != http.StatusOK || value != "https://pay.example/" || reason == "DISABLED" {
		t.Fatalf("imported-on once approved: %d %q %s, want it on", status, value, reason)
	}
}

// TestDeclinedNewFlagIsNeverServed: a new flag in Prod whose change request
// bob declines is never served (OFREP, the client data-sync and the server
// data-sync give nothing of it before) and then is gone from the server
// data-sync too, as a deleted flag is.
func TestDeclinedNewFlagIsNeverServed(t *testing.T) {
	t.Parallel()
	as := newApprovalSite(t)
	h := as.handler(server.Config{}, slog.New(slog.DiscardHandler))
	prodFlags := "/api/v1/envs/" + as.prod.ID.String() + "/feature-flags"
	body := offFlag("declined")
	body["reason"], body["reviewers"] = "new payment page", []uuid.UUID{as.bobID}
	var created flagstore.CreatedFlag
	must(t, json.Unmarshal(as.api(h, as.dave, "POST", prodFlags, body, http.StatusOK), &created))
	if created.PendingApproval == nil {
		t.Fatalf("the answer does not say a change request was made: %+v", created)
	}
	as.notServed(as.prod, "declined")
	as.api(h, as.bob, "PUT", prodFlags+"/change-requests/"+created.PendingApproval.ChangeRequestID.String()+"/decline",
		map[string]string{"comment": "no"}, http.StatusOK)
	if status, value, _, f := as.served(as.prod, "declined"); status != http.StatusNotFound || value != "" || f != nil {
		t.Fatalf("declined, the flag: OFREP %d %q, server data-sync %+v; want it gone", status, value, f)
	}
}
