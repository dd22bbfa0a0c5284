package web_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
)

// TestFlagEvaluationsAreShown: the flag list and page say when SDKs last
// evaluated a flag ("never" until one reports), so stale flags stand out.
func TestFlagEvaluationsAreShown(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	b := a.signedIn(ownerEmail, ownerPassword)
	if got := b.get("/flags").status(http.StatusOK).text("flag-last-evaluated"); got != "Evaluated never" {
		t.Fatalf("list says %q before any SDK report, want Evaluated never", got)
	}
	if got := b.get("/flags/checkout").text("flag-evaluated"); got != "Never evaluated by an SDK" {
		t.Fatalf("flag page says %q", got)
	}

	// An SDK of the environment reports 7 evaluations three minutes ago.
	secret := env.Secrets[0]
	sdk, err := a.st.SDK().SDKEnvBySecret(t.Context(), secret.Value)
	must(t, err)
	must(t, a.st.SDK().RecordEvaluations(t.Context(), sdk, []sdkdata.EvaluationCount{{FlagKey: "checkout", VariationID: f.Variations[0].ID, Count: 7}},
		time.Now().Add(-3*time.Minute)))
	if got := b.get("/flags").text("flag-last-evaluated"); got != "Evaluated 3 minutes ago" {
		t.Fatalf("list says %q, want Evaluated 3 minutes ago", got)
	}
	if got := b.get("/flags/checkout").text("flag-evaluated"); got != "Evaluated 3 minutes ago, 7 times" {
		t.Fatalf("flag page says %q", got)
	}
}

// TestTestAUser: the flag page's "test a user" panel answers, with the
// SDKs' engine, what a user gets and why; a missing key is shown at its field.
func TestTestAUser(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	f := a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout", IsEnabled: true})
	tg := f.Targeting()
	tg.TargetUsers = []flagstore.TargetUser{{KeyIDs: []string{"alice"}, VariationID: f.Variations[1].ID}}
	tg.Rules = []flagstore.FlagRule{{ID: "r1", Name: "Dutch users", Conditions: []flagstore.Condition{{ID: "c1", Property: "country", Op: "Equal", Value: "NL"}},
		Variations: []flagstore.RolloutVariation{{ID: f.Variations[1].ID, Rollout: []float64{0, 1}, ExptRollout: 1}}}}
	_, err := a.st.Flags().SetFlagTargeting(t.Context(), a.ownerActor(), env.ID, "checkout", flagstore.TargetingInput{Targeting: &tg})
	must(t, err)
	b := a.signedIn(ownerEmail, ownerPassword)
	b.get("/flags/checkout").must("flag-tester")

	for _, tc := range []struct{ keyID, props, variation, reason string }{
		{"alice", "", "False", "targeted"},
		{"bob", "country=NL", "False", "Dutch users"},
		{"carol", "country=BE", "True", "default"},
	} {
		p := b.htmx("/flags/checkout/test", url.Values{"keyId": {tc.keyID}, "properties": {tc.props}}).status(http.StatusOK)
		if got := p.text("tester-variation"); got != tc.variation {
			t.Errorf("%s serves %q, want %q", tc.keyID, got, tc.variation)
		}
		if got := p.text("tester-reason"); got != tc.reason {
			t.Errorf("%s: reason %q, want %q", tc.keyID, got, tc.reason)
		}
	}
	p := b.post("/flags/checkout/test", url.Values{"keyId": {" "}}).status(http.StatusBadRequest)
	if msg := p.text("error-keyId"); msg == "" {
		t.Fatal("a missing user key shows no message at its field")
	}
	if p.has("tester-result") {
		t.Fatal("a refused test shows a result")
	}
}
