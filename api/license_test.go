package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/google/uuid"
)

// readLicense reads a licence as FeatBit's UI does (its License type
// in FeatBit's front end): JSON.parse(atob(license.split('.')[1])), no signature
// check.
func readLicense(t *testing.T, license string) (iam.License, bool) {
	t.Helper()
	parts := strings.Split(license, ".")
	if len(parts) != 2 {
		return iam.License{}, false
	}
	raw, err := base64.StdEncoding.DecodeString(parts[1])
	if err != nil {
		t.Errorf("licence payload %q is not base64: %v", parts[1], err)
		return iam.License{}, false
	}
	var l iam.License
	if err := json.Unmarshal(raw, &l); err != nil {
		t.Errorf("licence payload %s is not JSON: %v", raw, err)
		return iam.License{}, false
	}
	return l, true
}

// isBuntingLicense reports whether license is the licence Bunting reports
// for the workspace: every feature it has, none it lacks, never expiring.
func isBuntingLicense(t *testing.T, license string, wsID uuid.UUID) bool {
	t.Helper()
	l, ok := readLicense(t, license)
	return ok && l.WsID == wsID.String() && slices.Equal(l.Features, iam.LicenseFeatures)
}

// grants is License.isGranted of FeatBit's UI: not expired (exp in Unix
// milliseconds), and the feature or "*" listed.
func grants(l iam.License, feature string, now time.Time) bool {
	if l.Exp < now.UnixMilli() {
		return false
	}
	return slices.Contains(l.Features, feature) || slices.Contains(l.Features, "*")
}

// TestLicenseGrantsWhatBuntingHas: the licence FeatBit's UI reads grants
// schedules, change requests, flag comparison, several organizations,
// single sign-on, shared segments and fine-grained actions, not the two
// features Bunting lacks nor "*"; it does not expire (the UI would then
// grant nothing) and is shown as "Forever" (over a year away); it names
// the workspace and when it was made.
func TestLicenseGrantsWhatBuntingHas(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	ws := decode[[]iam.Workspace](t, s.do("GET", "/api/v1/user/workspaces", s.owner, nil).ok(t))
	if len(ws) != 1 {
		t.Fatalf("workspaces %+v", ws)
	}
	l, ok := readLicense(t, ws[0].License)
	if !ok {
		t.Fatalf("licence %q is not FeatBit's signature.payload", ws[0].License)
	}
	in100Years := time.Now().AddDate(100, 0, 0)
	for _, f := range []string{"sso", "schedule", "change-request", "multi-organization", "shareable-segment", "fine-grained-ac", "flag-comparison"} {
		if !grants(l, f, time.Now()) || !grants(l, f, in100Years) {
			t.Errorf("licence %+v does not grant %q now and in 100 years", l, f)
		}
	}
	for _, f := range []string{"global-user", "auto-agents"} {
		if grants(l, f, time.Now()) {
			t.Errorf("licence grants %q, which Bunting does not have", f)
		}
	}
	var created time.Time
	must(t, s.pool.QueryRow(context.Background(), `SELECT created_at FROM workspaces WHERE id = $1`, s.wsID).Scan(&created))
	if l.WsID != s.wsID.String() || l.Sub != "default-workspace" || l.Iat != created.UnixMilli() || l.Plan == "" ||
		time.UnixMilli(l.Exp).Before(time.Now().AddDate(1, 0, 1)) {
		t.Errorf("licence %+v: want this workspace, its key, its creation and an expiry shown as Forever", l)
	}
}

// TestLicenseIsNotStored: the licence is derived, so one written into the
// database (say, a FeatBit licence key carried over) neither replaces it
// nor reaches anyone.
func TestLicenseIsNotStored(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	_, err := s.pool.Exec(context.Background(), `UPDATE workspaces SET license = 'sig.eyJmZWF0dXJlcyI6WyIqIl19'`)
	must(t, err)
	w := decode[iam.Workspace](t, s.do("GET", "/api/v1/workspaces", s.owner, nil).ok(t))
	if !isBuntingLicense(t, w.License, s.wsID) {
		t.Errorf("workspace licence %q, want Bunting's", w.License)
	}
	ws := decode[[]iam.Workspace](t, s.do("GET", "/api/v1/user/workspaces", s.owner, nil).ok(t))
	if len(ws) != 1 || !isBuntingLicense(t, ws[0].License, s.wsID) {
		t.Errorf("user's workspaces %+v, want Bunting's licence", ws)
	}
	// There is no route to change it (FeatBit's PUT /workspaces/license).
	s.do("PUT", "/api/v1/workspaces/license", s.owner, map[string]string{"license": "sig.eyJmZWF0dXJlcyI6WyIqIl19"}).
		fails(t, 404, "ResourceNotFound")
}
