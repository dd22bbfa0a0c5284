package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestBodyNamingNothingIsRefused walks every PUT, PATCH and POST route of
// /api/v1 the router has and sends a body naming only a member no route
// understands. None may answer 200: it is refused with
// 400 and nothing is stored. That includes the routes whose body is optional
// (archive, restore, toggle with an optional comment: {} and no body are
// accepted there) and those that read none (add-policy …: any member is
// one they do not understand), so no route is exempt. A route changed to
// name its required fields still refuses, by that field's name.
func TestBodyNamingNothingIsRefused(t *testing.T) {
	t.Parallel()
	m := newMatrix(t)
	s := m.s
	s.hostile = true // routes that take no body are sent one on purpose
	cases := m.allCases()
	for _, route := range m.apiRoutes() {
		method, path, _ := strings.Cut(route, " ")
		if method != http.MethodPut && method != http.MethodPatch && method != http.MethodPost {
			continue
		}
		// A trigger's URL is called by alerting systems with their own
		// payloads: it reads no body, so none is refused (TestTriggerRun).
		if route == "POST /api/v1/triggers/run/:token" {
			continue
		}
		target := path
		if make := cases[route]; make != nil {
			target = make().path
		} else if strings.Contains(path, ":") {
			t.Errorf("%s: no case to build its path from", route)
			continue
		}
		before := m.fingerprint()
		r := s.do(method, target, s.owner, `{"unknownField":1}`)
		if r.Status == http.StatusOK {
			t.Errorf("%s with {\"unknownField\":1}: got 200 %.200s, want a refusal", route, r.raw)
			continue
		}
		if r.Status != http.StatusBadRequest {
			t.Errorf("%s with {\"unknownField\":1}: got %d %v, want 400", route, r.Status, r.Errors)
		}
		if after := m.fingerprint(); after != before {
			t.Errorf("%s with {\"unknownField\":1} was refused but changed what is stored", route)
		}
	}
}
