package webhook

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
)

// TestSlackWebhookSaysChangesInWords: a webhook in the Slack format gets
// {"text": ...} to a loopback receiver for a change request made,
// approved and applied and for a flag's change, each a sentence with a
// link to the page, while a webhook in FeatBit's format gets its data
// object for the same flag change, unchanged.
func TestSlackWebhookSaysChangesInWords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t, core.ConfigurePool)
	keys, err := core.DeriveKeys(strings.Repeat("webhook-test-", 4))
	must(t, err)
	st := store.New(pool, keys, slog.New(slog.DiscardHandler), core.Options{PasswordCost: bcrypt.MinCost,
		LoginDelayStep: time.Millisecond, WebhookAllowPrivateNetworks: true, BaseURL: "https://flags.example.com/"})
	_, err = st.IAM().Bootstrap(ctx, iam.Owner{Email: "owner@example.com", Password: "owner-password"})
	must(t, err)
	signIn := func(email, password string) *core.Actor {
		session, err := st.IAM().Login(ctx, iam.LoginInput{Email: email, Password: password}, "192.0.2.1")
		must(t, err)
		a, err := st.IAM().Authenticate(ctx, iam.Credentials{Authorization: "Bearer " + session.Token})
		must(t, err)
		return a
	}
	owner := signIn("owner@example.com", "owner-password")
	s := &dbStore{st, pool}
	prod, _ := prodAndDev(t, s, owner)
	member := func(email, name string) *core.Actor {
		m, err := st.IAM().AddMember(ctx, owner, iam.MemberInput{Email: email, PolicyIDs: []uuid.UUID{core.OwnerPolicyID}})
		must(t, err)
		a := signIn(email, *m.InitialPassword)
		_, err = st.IAM().UpdateProfile(ctx, a, iam.ProfileInput{Name: name, Email: email})
		must(t, err)
		return a
	}
	ana, ben := member("ana@example.com", "Ana"), member("ben@example.com", "Ben")
	// The flag is there before changes need approval: a new flag would need a request of its own.
	_, err = st.Flags().CreateFlag(ctx, owner, prod.ID, flagstore.FlagInput{Name: "New checkout", Key: "new-checkout"})
	must(t, err)
	_, err = st.Projects().UpdateEnvironment(ctx, owner, prod.ProjectID, prod.ID, core.EnvironmentInput{Name: "Production",
		Settings: &core.EnvSettings{ChangeRequest: &core.ChangeRequestSettings{IsEnabled: true, ApprovalsRequired: 1,
			ApproverMemberIDs: []uuid.UUID{ben.UserID}}}})
	must(t, err)

	slack, featbit := newReceiver(t), newReceiver(t)
	sl, err := st.Webhooks().CreateWebhook(ctx, owner, webhooks.WebhookInput{Name: "Slack", URL: slack.URL, PayloadTemplateType: webhooks.PayloadSlack,
		Scopes: []string{prod.ProjectID.String() + "/" + prod.ID.String()}, IsActive: true,
		Events: []string{flagstore.EventChangeRequestCreated, flagstore.EventChangeRequestApproved, flagstore.EventChangeRequestApplied,
			webhooks.EventFlagToggled, webhooks.EventFlagBasicInfoUpdated}})
	must(t, err)
	if sl.PayloadTemplateType != webhooks.PayloadSlack {
		t.Fatalf("the webhook's format: got %q, want slack", sl.PayloadTemplateType)
	}
	hookOn(t, s, owner, prod, featbit.URL, "", webhooks.EventFlagBasicInfoUpdated)
	runWorker(t, st, fast)

	on := true
	cr, err := st.Governance().CreateFlagChangeRequest(ctx, ana, prod.ID, "new-checkout", flagstore.FlagChangeRequestInput{IsEnabled: &on,
		Reason: "Launch day", Reviewers: []uuid.UUID{ben.UserID}})
	must(t, err)
	_, err = st.Governance().ApproveFlagChangeRequest(ctx, ben, prod.ID, cr.ID, governance.ReviewInput{})
	must(t, err)
	_, err = st.Governance().ApplyFlagChangeRequest(ctx, ana, prod.ID, cr.ID)
	must(t, err)
	description := "The one-page checkout"
	_, err = st.Flags().UpdateFlagDescription(ctx, ana, prod.ID, "new-checkout", flagstore.DescriptionInput{Description: &description})
	must(t, err)
	drained(t, pool)

	review := "https://flags.example.com/reviews/" + cr.ID.String()
	want := []struct{ event, text string }{
		{flagstore.EventChangeRequestCreated, "Ana asked to turn on New checkout in Web / Production — review: " + review + "\nReason: Launch day"},
		{flagstore.EventChangeRequestApproved, "Ben approved the change to New checkout in Web / Production: " + review},
		{webhooks.EventFlagToggled, "Ana changed New checkout in Web / Production: Turned the flag on — https://flags.example.com/flags/new-checkout"},
		{flagstore.EventChangeRequestApplied, "Ana applied the change to New checkout in Web / Production: " + review},
		{webhooks.EventFlagBasicInfoUpdated, "Ana changed New checkout in Web / Production: "},
	}
	// Deliveries queued by one transaction may come in any order: each
	// event is looked for by its header.
	got := map[string]string{}
	for _, g := range slack.received() {
		var body map[string]any
		if err := json.Unmarshal(g.body, &body); err != nil || len(body) != 1 {
			t.Fatalf("%s: body %s, want only {\"text\": ...}", g.event, g.body)
		}
		if _, twice := got[g.event]; twice {
			t.Fatalf("%s delivered twice", g.event)
		}
		got[g.event], _ = body["text"].(string)
	}
	if len(got) != len(want) {
		t.Fatalf("the Slack webhook got %v, want %d deliveries", got, len(want))
	}
	for _, w := range want {
		if text, ok := got[w.event]; !ok || !strings.HasPrefix(text, w.text) {
			t.Errorf("%s: got %q, want %q", w.event, text, w.text)
		}
	}

	// FeatBit's format is as it was: its data object, not a text.
	fb := featbit.received()
	if len(fb) != 1 {
		t.Fatalf("the FeatBit-format webhook got %d deliveries, want 1", len(fb))
	}
	var payload struct {
		Events string `json:"events"`
		Text   *string
		Data   struct {
			Kind   string         `json:"kind"`
			Object map[string]any `json:"object"`
		} `json:"data"`
		Changes []string `json:"changes"`
	}
	must(t, json.Unmarshal(fb[0].body, &payload))
	if payload.Events != webhooks.EventFlagBasicInfoUpdated || payload.Text != nil || payload.Data.Kind != "feature flag" ||
		payload.Data.Object["key"] != "new-checkout" || payload.Data.Object["description"] != "The one-page checkout" {
		t.Fatalf("the FeatBit-format payload: %s", fb[0].body)
	}
}
