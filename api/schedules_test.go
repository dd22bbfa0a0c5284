package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
)

// pendingChanges reads a flag's pending changes as FeatBit's clients do.
func (f envFixture) pendingChanges(key string) []governance.PendingChange {
	f.s.t.Helper()
	return decode[[]governance.PendingChange](f.s.t, f.s.do("GET", f.flags+"/"+key+"/pending-changes", f.s.owner, nil).ok(f.s.t))
}

func TestFlagSchedulesAPI(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	f := e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Second)

	// FeatBit's body: the whole targeting after the change, with the revision it was made from.
	targeting := map[string]any{"targetUsers": []map[string]any{{"keyIds": []string{"alice"}, "variationId": f.Variations[0].ID}},
		"rules": []any{}, "fallthrough": f.Fallthrough, "exptIncludeAllTargets": true}
	r := s.do("POST", e.flags+"/pay/schedules", s.owner, map[string]any{"revision": f.Revision, "targeting": targeting,
		"title": "Alice first", "scheduledTime": at, "withChangeRequest": false, "reason": "beta", "reviewers": []uuid.UUID{}}).ok(t)
	if string(r.Data) != "true" {
		t.Fatalf("create answered %s, want true", r.Data)
	}
	pending := e.pendingChanges("pay")
	if len(pending) != 1 {
		t.Fatalf("pending changes %+v, want 1", pending)
	}
	p := pending[0]
	if p.Type != "Schedule" || p.Status != "PendingExecution" || p.ScheduleTitle != "Alice first" || !p.ScheduledTime.Equal(at) ||
		p.FlagID != f.ID || p.CreatorName == "" || p.Comment != "beta" || !slices.Equal(p.Changed, []string{"individual targets"}) {
		t.Fatalf("pending change %+v", p)
	}
	// FeatBit's drawer lists the change's instructions: alice set as the
	// first variation's target (FlagComparer).
	if len(p.Instructions) != 1 || p.Instructions[0].Kind != "SetTargetUsers" {
		t.Fatalf("pending change's instructions %+v, want SetTargetUsers", p.Instructions)
	}
	// FeatBit's dataChange carries each flag as a string of JSON text.
	var text [2]string
	var before, after flagstore.Flag
	must(t, json.Unmarshal(p.DataChange.Previous, &text[0]))
	must(t, json.Unmarshal(p.DataChange.Current, &text[1]))
	must(t, json.Unmarshal([]byte(text[0]), &before))
	must(t, json.Unmarshal([]byte(text[1]), &after))
	if len(before.TargetUsers) != 0 || len(after.TargetUsers) != 1 || after.TargetUsers[0].KeyIDs[0] != "alice" {
		t.Fatalf("dataChange %s → %s", p.DataChange.Previous, p.DataChange.Current)
	}
	if got := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t)); len(got.TargetUsers) != 0 {
		t.Fatal("scheduling changed the flag now")
	}

	// Bunting's body: the flag as the change leaves it.
	on := map[string]any{"title": "Launch", "note": "after the press release", "scheduledTime": at.Add(time.Hour),
		"targetFlag": map[string]any{"isEnabled": true}, "comment": "launch"}
	s.do("POST", e.flags+"/pay/schedules", s.owner, on).ok(t)
	if pending = e.pendingChanges("pay"); len(pending) != 2 || pending[1].Note != "after the press release" ||
		!slices.Equal(pending[1].Changed, []string{"on/off state"}) {
		t.Fatalf("pending changes %+v, want the launch second", pending)
	}

	// Refused, with named errors.
	bad := func(change func(map[string]any)) map[string]any {
		b := map[string]any{"title": "x", "scheduledTime": at, "targetFlag": map[string]any{"isEnabled": true}}
		change(b)
		return b
	}
	s.do("POST", e.flags+"/pay/schedules", s.owner, bad(func(b map[string]any) { b["scheduledTime"] = time.Now().Add(-time.Minute).UTC() })).
		fails(t, http.StatusBadRequest, "scheduledTime_is_invalid")
	s.do("POST", e.flags+"/pay/schedules", s.owner, bad(func(b map[string]any) { delete(b, "title") })).
		fails(t, http.StatusBadRequest, "title_is_required")
	s.do("POST", e.flags+"/pay/schedules", s.owner, bad(func(b map[string]any) { b["targetFlag"] = map[string]any{"isEnabled": false} })).
		fails(t, http.StatusBadRequest, "targetFlag_is_invalid")
	s.do("POST", e.flags+"/pay/schedules", s.owner, bad(func(b map[string]any) { delete(b, "targetFlag") })).
		fails(t, http.StatusBadRequest, "targetFlag_is_required")
	s.do("POST", e.flags+"/pay/schedules", s.owner, bad(func(b map[string]any) { b["revision"] = uuid.New() })).
		fails(t, http.StatusConflict, "Conflict")
	s.do("POST", e.flags+"/nope/schedules", s.owner, bad(func(map[string]any) {})).fails(t, http.StatusNotFound, "ResourceNotFound")
	nobody, _ := s.addMember("nobody@example.com")
	s.do("POST", e.flags+"/pay/schedules", nobody, bad(func(map[string]any) {})).fails(t, http.StatusForbidden, "Forbidden")

	// Cancelling: once, then it is gone from the pending changes.
	id := pending[0].ID.String()
	s.do("DELETE", e.flags+"/schedules/"+id, nobody, nil).fails(t, http.StatusForbidden, "Forbidden")
	if r := s.do("DELETE", e.flags+"/schedules/"+id, s.owner, nil).ok(t); string(r.Data) != "true" {
		t.Fatalf("cancel answered %s, want true", r.Data)
	}
	s.do("DELETE", e.flags+"/schedules/"+id, s.owner, nil).fails(t, http.StatusUnprocessableEntity, "FlagScheduleIsNotPending")
	s.do("DELETE", e.flags+"/schedules/"+uuid.NewString(), s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	if pending = e.pendingChanges("pay"); len(pending) != 1 || pending[0].ScheduleTitle != "Launch" {
		t.Fatalf("pending after cancelling %+v, want only the launch", pending)
	}
}

// A schedule applies with its author's rights at its time: a member whose
// policy was taken away meanwhile changes nothing, and the schedule says why.
func TestScheduleFailsWhenItsAuthorLostTheRight(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	dev, devID := s.addMember("dev@example.com", core.DeveloperPolicyID)
	s.do("POST", e.flags+"/pay/schedules", dev, map[string]any{"title": "Launch", "scheduledTime": time.Now().Add(time.Hour).UTC(),
		"targetFlag": map[string]any{"isEnabled": true}}).ok(t)
	ctx := context.Background()
	if _, err := s.pool.Exec(ctx, `DELETE FROM member_policies WHERE user_id = $1`, devID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE flag_schedules SET scheduled_at = now()`); err != nil {
		t.Fatal(err)
	}
	workerCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runner.NewSchedules(s.st, slog.New(slog.DiscardHandler)).Run(workerCtx, 20*time.Millisecond)
	}()
	defer func() { stop(); <-done }()

	deadline := time.Now().Add(5 * time.Second)
	for {
		pending := e.pendingChanges("pay")
		if len(pending) == 1 && pending[0].Status == "Failed" {
			if !strings.Contains(pending[0].FailureReason, "may no longer make this change") {
				t.Fatalf("failure reason %q", pending[0].FailureReason)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pending changes %+v, want the schedule failed", pending)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if f := decode[flagstore.Flag](t, s.do("GET", e.flags+"/pay", s.owner, nil).ok(t)); f.IsEnabled {
		t.Fatal("a schedule whose author lost the right turned the flag on")
	}
}

// A flag may be keyed "schedules": its routes still reach it, beside the
// route that cancels a schedule.
func TestFlagKeyedSchedules(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	e.createFlag(map[string]any{"name": "Schedules", "key": "schedules"})
	s.do("GET", e.flags+"/schedules", s.owner, nil).ok(t)
	s.do("GET", e.flags+"/schedules/pending-changes", s.owner, nil).ok(t)
	s.do("PUT", e.flags+"/schedules/toggle/true", s.owner, nil).ok(t)
	s.do("PUT", e.flags+"/schedules/archive", s.owner, nil).ok(t)
}
