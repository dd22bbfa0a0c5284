package api_test

import (
	"crypto/sha256"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/web/limit"
)

// createTrigger makes a trigger on flag f and returns it with its whole token.
func (s *server) createTrigger(f flagstore.Flag, action, description string) governance.Trigger {
	s.t.Helper()
	return decode[governance.Trigger](s.t, s.do("POST", "/api/v1/triggers", s.owner,
		map[string]any{"targetId": f.ID, "type": "feature-flag-general", "action": action, "description": description}).ok(s.t))
}

// payServer is a server whose Prod has the flag pay, for triggers to act on.
func payServer(t *testing.T) (*server, envFixture, flagstore.Flag) {
	t.Helper()
	s := newServer(t)
	e := s.prodEnv()
	return s, e, e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
}

// run calls a trigger's URL, as an alerting system does: no credentials,
// whatever body the alert carries.
func (s *server) run(token string) *reply {
	s.t.Helper()
	return s.do("POST", "/api/v1/triggers/run/"+token, "", `{"alert":"checkout 5xx over 2%"}`)
}

// TestTriggerRun: FeatBit's shapes, a call turns the flag off through the
// ordinary change path with a history entry naming the trigger, the token
// is shown once and stored only hashed, and a reset, a disabled trigger and
// a deleted one all answer 404 alike.
func TestTriggerRun(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Checkout v2", "key": "checkout-v2"})
	s.do("PUT", e.flags+"/checkout-v2/toggle/true", s.owner, nil).ok(t)

	tr := s.createTrigger(f, "turn-off", "PagerDuty checkout")
	if len(tr.Token) != 40 || strings.Contains(tr.Token, "*") || tr.TargetID != f.ID || tr.Type != "feature-flag-general" ||
		tr.Action != "turn-off" || !tr.IsEnabled || tr.TriggeredTimes != 0 || tr.LastTriggeredAt != nil || tr.Description != "PagerDuty checkout" {
		t.Fatalf("created %+v", tr)
	}
	// Only the hash is stored.
	sum := sha256.Sum256([]byte(tr.Token))
	if n := s.count(`SELECT count(*) FROM flag_triggers WHERE token_hash = $1 AND position($2 in token_preview) = 0`, sum[:], tr.Token); n != 1 {
		t.Errorf("%d triggers stored with the token's hash and not the token, want 1", n)
	}
	// Lists show five characters, as FeatBit does.
	list := decode[[]governance.Trigger](t, s.do("GET", "/api/v1/triggers?targetId="+f.ID.String(), s.owner, nil).ok(t))
	if len(list) != 1 || list[0].Token != tr.Token[:5]+strings.Repeat("*", 35) {
		t.Fatalf("list %+v, want the trigger with its token hidden", list)
	}

	if r := s.run(tr.Token).ok(t); string(r.Data) != "true" {
		t.Fatalf("run answered %s, want true", r.Data)
	}
	got := decode[flagstore.Flag](t, s.do("GET", e.flags+"/checkout-v2", s.owner, nil).ok(t))
	if got.IsEnabled {
		t.Fatal("the flag is still on after the turn-off trigger ran")
	}
	revs := decode[core.Paged[flagstore.FlagRevision]](t, s.do("GET", e.flags+"/checkout-v2/revisions", s.owner, nil).ok(t))
	if revs.Items[0].Comment != "Turned off by trigger “PagerDuty checkout”" || revs.Items[0].CreatorID != tr.ID {
		t.Errorf("newest revision %q by %s, want the trigger's", revs.Items[0].Comment, revs.Items[0].CreatorID)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_id = $1 AND creator_kind = 'system' AND creator_id = $2
		AND comment LIKE '%PagerDuty checkout%' AND (previous->>'isEnabled')::boolean AND NOT (current->>'isEnabled')::boolean`,
		f.ID.String(), tr.ID); n != 1 {
		t.Errorf("%d history entries of the trigger turning the flag off, want 1", n)
	}
	// The environment's history names the trigger as who made the change.
	audit := decode[core.Paged[flagstore.AuditEntry]](t, s.do("GET", "/api/v1/envs/"+e.env.ID.String()+"/audit-logs?refType=FeatureFlag", s.owner, nil).ok(t))
	if a := audit.Items[0]; a.CreatorName != "Trigger “PagerDuty checkout”" || a.CreatorEmail != "Trigger" || a.Comment != revs.Items[0].Comment {
		t.Errorf("newest history entry by %q (%q): %q", a.CreatorName, a.CreatorEmail, a.Comment)
	}
	// The flag list says who changed it last: the trigger, by its description.
	listed := decode[core.Paged[flagstore.FlagListItem]](t, s.do("GET", e.flags, s.owner, nil).ok(t))
	if lc := listed.Items[0].LastChange; lc == nil || lc.Operator.Name != "Trigger “PagerDuty checkout”" || lc.Comment != revs.Items[0].Comment {
		t.Errorf("last change %+v, want the trigger's", lc)
	}
	// Called again, the flag is already off: counted, nothing changes.
	s.run(tr.Token).ok(t)
	if n := s.count(`SELECT count(*) FROM flag_revisions WHERE flag_id = $1`, f.ID); n != 3 {
		t.Errorf("%d revisions, want 3 (create, on, off by trigger)", n)
	}
	list = decode[[]governance.Trigger](t, s.do("GET", "/api/v1/triggers?targetId="+f.ID.String(), s.owner, nil).ok(t))
	if list[0].TriggeredTimes != 2 || list[0].LastTriggeredAt == nil {
		t.Errorf("after two calls: %+v", list[0])
	}

	// Reset: the old URL is gone at once, the new one works.
	newToken := decode[string](t, s.do("PUT", "/api/v1/triggers/"+tr.ID.String()+"/reset-token", s.owner, nil).ok(t))
	if len(newToken) != 40 || newToken == tr.Token {
		t.Fatalf("reset gave %q", newToken)
	}
	s.run(tr.Token).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.run(newToken).ok(t)

	// Disabled answers as unknown does; enabled again, it works.
	s.do("PUT", "/api/v1/triggers/"+tr.ID.String(), s.owner, map[string]bool{"isEnabled": false}).ok(t)
	s.run(newToken).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.run(strings.Repeat("x", 40)).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.run("short").fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("PUT", "/api/v1/triggers/"+tr.ID.String(), s.owner, map[string]any{}).fails(t, http.StatusBadRequest, "isEnabled_is_required")
	s.do("PUT", "/api/v1/triggers/"+tr.ID.String(), s.owner, map[string]bool{"isEnabled": true}).ok(t)
	s.run(newToken).ok(t)

	// A turn-on trigger turns it back on.
	on := s.createTrigger(f, "turn-on", "")
	s.run(on.Token).ok(t)
	if got := decode[flagstore.Flag](t, s.do("GET", e.flags+"/checkout-v2", s.owner, nil).ok(t)); !got.IsEnabled {
		t.Error("the turn-on trigger left the flag off")
	}
	revs = decode[core.Paged[flagstore.FlagRevision]](t, s.do("GET", e.flags+"/checkout-v2/revisions", s.owner, nil).ok(t))
	if want := "Turned on by trigger “" + on.Token[:5] + "…”"; revs.Items[0].Comment != want {
		t.Errorf("comment %q, want %q (an undescribed trigger is named by its token's start)", revs.Items[0].Comment, want)
	}

	// Deleted: 404, and management of it too.
	s.do("DELETE", "/api/v1/triggers/"+tr.ID.String(), s.owner, nil).ok(t)
	s.run(newToken).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("DELETE", "/api/v1/triggers/"+tr.ID.String(), s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	// Managing triggers is in the environment's history.
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_type = 'FlagTrigger' AND ref_id = $1`, tr.ID.String()); n != 5 {
		t.Errorf("%d history entries of the trigger's management, want 5 (create, reset, disable, enable, delete)", n)
	}
}

func TestTriggerInput(t *testing.T) {
	t.Parallel()
	s, e, f := payServer(t)
	s.do("POST", "/api/v1/triggers", s.owner, map[string]any{"targetId": f.ID, "type": "webhook", "action": "explode"}).
		fails(t, http.StatusBadRequest, "type_is_invalid", "action_is_invalid")
	s.do("POST", "/api/v1/triggers", s.owner, map[string]any{"type": "feature-flag-general", "action": "turn-on"}).
		fails(t, http.StatusBadRequest, "targetId_is_required")
	s.do("POST", "/api/v1/triggers", s.owner, map[string]any{"targetId": f.ID, "type": "feature-flag-general", "action": "turn-on",
		"description": strings.Repeat("d", 513)}).fails(t, http.StatusBadRequest, "description_is_invalid")
	s.do("POST", "/api/v1/triggers", s.owner, map[string]any{"targetId": "not-a-uuid"}).fails(t, http.StatusBadRequest, "body_is_invalid")
	s.do("POST", "/api/v1/triggers", s.owner, map[string]any{"targetId": e.env.ID, "type": "feature-flag-general", "action": "turn-on"}).
		fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("GET", "/api/v1/triggers", s.owner, nil).fails(t, http.StatusBadRequest, "targetId_is_required")
	if n := s.count(`SELECT count(*) FROM flag_triggers`); n != 0 {
		t.Errorf("%d triggers stored from refused input", n)
	}
	// A flag holds at most 50.
	for range governance.MaxFlagTrigger {
		s.createTrigger(f, "turn-on", "")
	}
	s.do("POST", "/api/v1/triggers", s.owner, map[string]any{"targetId": f.ID, "type": "feature-flag-general", "action": "turn-on"}).
		fails(t, http.StatusUnprocessableEntity, "TooManyTriggers")
}

// TestTriggerRateLimit: a trigger runs TriggerBurst times at once, then
// answers 429 with Retry-After and changes nothing; another trigger is not
// held back by it.
func TestTriggerRateLimit(t *testing.T) {
	t.Parallel()
	s, e, f := payServer(t)
	off := s.createTrigger(f, "turn-off", "")
	on := s.createTrigger(f, "turn-on", "")
	for range limit.TriggerBurst {
		s.run(off.Token).ok(t)
	}
	r := s.run(off.Token)
	r.fails(t, http.StatusTooManyRequests, "TooManyRequests")
	if r.Header.Get("Retry-After") != "10" {
		t.Errorf("Retry-After %q, want 10", r.Header.Get("Retry-After"))
	}
	s.run(on.Token).ok(t)
	// The refused call changed nothing: the flag is as the other trigger left it.
	if got := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t)); !got.IsEnabled {
		t.Error("a refused turn-off call turned the flag off")
	}
	list := decode[[]governance.Trigger](t, s.do("GET", "/api/v1/triggers?targetId="+f.ID.String(), s.owner, nil).ok(t))
	for _, tr := range list {
		if tr.ID == off.ID && tr.TriggeredTimes != limit.TriggerBurst {
			t.Errorf("the limited trigger counted %d calls, want %d", tr.TriggeredTimes, limit.TriggerBurst)
		}
	}
}

// An archived flag is read-only: a trigger on it is refused visibly and
// counts nothing.
func TestTriggerOnArchivedFlag(t *testing.T) {
	t.Parallel()
	s, e, f := payServer(t)
	tr := s.createTrigger(f, "turn-on", "")
	s.do("PUT", e.flags+"/pay/archive", s.owner, nil).ok(t)
	s.run(tr.Token).fails(t, http.StatusUnprocessableEntity, "FlagIsArchived")
	if n := s.count(`SELECT triggered_times FROM flag_triggers WHERE id = $1`, tr.ID); n != 0 {
		t.Errorf("a refused run counted: %d", n)
	}
	if got := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t)); got.IsEnabled {
		t.Error("the archived flag was turned on")
	}
}

// A member who may read the environment but not toggle its flags sees the
// triggers but cannot make, reset, disable or delete one; another
// organization's member does not find them at all.
func TestTriggersNeedToggleFlag(t *testing.T) {
	t.Parallel()
	s, _, f := payServer(t)
	tr := s.createTrigger(f, "turn-off", "")
	reader, _ := s.addMember("reader@example.com", s.policyFor("env-reader", []access.Statement{{
		ResourceType: access.TypeEnv, Effect: "allow", Actions: []string{string(access.CanAccessEnv)}, Resources: []string{"project/*:env/*"}}}))

	if list := decode[[]governance.Trigger](t, s.do("GET", "/api/v1/triggers?targetId="+f.ID.String(), reader, nil).ok(t)); len(list) != 1 {
		t.Errorf("reader sees %d triggers, want 1", len(list))
	}
	id := tr.ID.String()
	s.do("POST", "/api/v1/triggers", reader, map[string]any{"targetId": f.ID, "type": "feature-flag-general", "action": "turn-on"}).
		fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", "/api/v1/triggers/"+id+"/reset-token", reader, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", "/api/v1/triggers/"+id, reader, map[string]bool{"isEnabled": false}).fails(t, http.StatusForbidden, "Forbidden")
	s.do("DELETE", "/api/v1/triggers/"+id, reader, nil).fails(t, http.StatusForbidden, "Forbidden")
	nobody, _ := s.addMember("nobody@example.com")
	s.do("GET", "/api/v1/triggers?targetId="+f.ID.String(), nobody, nil).fails(t, http.StatusForbidden, "Forbidden")
	// Nothing changed: the original token still works.
	s.run(tr.Token).ok(t)
}

// Guessing tokens is bounded per address: after TriggerMissBurst misses one
// address gets 429 for further misses, while a real token from that same
// address still runs (its own trigger's limit is the only one it meets).
func TestTriggerMissesAreLimitedPerAddress(t *testing.T) {
	t.Parallel()
	s, e, f := payServer(t)
	tr := s.createTrigger(f, "turn-on", "")
	guesser := "198.51.100.7:4000"
	// Misses refill one a second, so on a slow machine a few more than the
	// burst may pass before the first 429; never fewer, never many more.
	start, misses := time.Now(), 0
	for ; misses <= 2*limit.TriggerMissBurst; misses++ {
		r := s.do("POST", "/api/v1/triggers/run/"+strings.Repeat(string(rune('a'+misses%26)), 40), "", nil, remoteAddr, guesser)
		if r.Status == http.StatusTooManyRequests {
			break
		}
		r.fails(t, http.StatusNotFound, "ResourceNotFound")
	}
	if refills := int(time.Since(start)/time.Second) + 1; misses < limit.TriggerMissBurst || misses > limit.TriggerMissBurst+refills {
		t.Fatalf("%d misses answered 404 before the first 429, want %d (+%d refilled)", misses, limit.TriggerMissBurst, refills)
	}
	// The real token from the guessing address runs and turns the flag on.
	refused := time.Now()
	s.do("POST", "/api/v1/triggers/run/"+tr.Token, "", nil, remoteAddr, guesser).ok(t)
	if got := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t)); !got.IsEnabled {
		t.Error("the trigger answered but the flag is still off")
	}
	// Guessing stays refused: past the misses refilled since the first 429
	// (one a second, which a slow machine gives time for), the next is 429.
	refills := int(time.Since(refused)/time.Second) + 1
	r := s.do("POST", "/api/v1/triggers/run/"+strings.Repeat("z", 40), "", nil, remoteAddr, guesser)
	for n := 0; r.Status == http.StatusNotFound && n < refills; n++ {
		r = s.do("POST", "/api/v1/triggers/run/"+strings.Repeat("z", 40), "", nil, remoteAddr, guesser)
	}
	r.fails(t, http.StatusTooManyRequests, "TooManyRequests")
	if r.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	s.do("POST", "/api/v1/triggers/run/"+tr.Token, "", nil, remoteAddr, "203.0.113.9:4000").ok(t)
}

// TestTriggerActsWithItsCreatorsRights: a trigger acts for whoever made it,
// so it stops, as their access tokens do, when they leave the organization
// or may no longer turn its flag on or off; refused, it answers 403
// TriggerCreatorNotAllowed and changes nothing, not even its count. A
// trigger made with an access token stops with the token.
func TestTriggerActsWithItsCreatorsRights(t *testing.T) {
	t.Parallel()
	s, e, f := payServer(t)
	dev, devID := s.addMember("dev@example.com", core.DeveloperPolicyID)
	tr := decode[governance.Trigger](t, s.do("POST", "/api/v1/triggers", dev,
		map[string]any{"targetId": f.ID, "type": "feature-flag-general", "action": "turn-on"}).ok(t))
	s.run(tr.Token).ok(t)
	s.do("PUT", e.flags+"/pay/toggle/false", s.owner, nil).ok(t)
	unchanged := func(runs int) {
		t.Helper()
		if got := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t)); got.IsEnabled {
			t.Error("a refused trigger turned the flag on")
		}
		if n := s.count(`SELECT triggered_times FROM flag_triggers WHERE id = $1`, tr.ID); n != runs {
			t.Errorf("the trigger counts %d runs, want %d", n, runs)
		}
		if n := s.count(`SELECT count(*) FROM audit_logs WHERE creator_id = $1`, tr.ID); n != runs {
			t.Errorf("%d history entries by the trigger, want %d", n, runs)
		}
	}

	// Its creator leaves the organization.
	s.do("DELETE", "/api/v1/members/remove-from-org/"+devID.String(), s.owner, nil).ok(t)
	s.run(tr.Token).fails(t, http.StatusForbidden, "TriggerCreatorNotAllowed")
	unchanged(1)

	// Back, but allowed only to read the environment.
	reader := s.policyFor("env-reader", []access.Statement{{ResourceType: access.TypeEnv, Effect: "allow",
		Actions: []string{string(access.CanAccessEnv)}, Resources: []string{"project/*:env/*"}}})
	s.addByEmail(map[string]any{"email": "dev@example.com", "policyIds": []string{reader.String()}, "groupIds": []string{}})
	s.run(tr.Token).fails(t, http.StatusForbidden, "TriggerCreatorNotAllowed")
	unchanged(1)
	// Allowed ToggleFlag on this flag again, it runs.
	s.do("PUT", "/api/v1/members/"+devID.String()+"/add-policy/"+core.DeveloperPolicyID.String(), s.owner, nil).ok(t)
	s.run(tr.Token).ok(t)
	if got := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t)); !got.IsEnabled {
		t.Error("the trigger of a creator allowed again left the flag off")
	}

	// Made with a Personal token, it stops while the token is off.
	s.do("PUT", e.flags+"/pay/toggle/false", s.owner, nil).ok(t)
	token := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]string{"name": "alerts", "type": "Personal"}).ok(t))
	byToken := decode[governance.Trigger](t, s.do("POST", "/api/v1/triggers", token.Token,
		map[string]any{"targetId": f.ID, "type": "feature-flag-general", "action": "turn-on"}).ok(t))
	s.do("PUT", "/api/v1/access-tokens/"+token.ID.String()+"/toggle", s.owner, nil).ok(t)
	s.run(byToken.Token).fails(t, http.StatusForbidden, "TriggerCreatorNotAllowed")
	s.do("PUT", "/api/v1/access-tokens/"+token.ID.String()+"/toggle", s.owner, nil).ok(t)
	s.run(byToken.Token).ok(t)
	s.do("DELETE", "/api/v1/access-tokens/"+token.ID.String(), s.owner, nil).ok(t)
	s.run(byToken.Token).fails(t, http.StatusForbidden, "TriggerCreatorNotAllowed")
}
