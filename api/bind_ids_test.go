package api

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// bindIDs reads each uuid parameter of a route into the field it names,
// passes over parameters that are no ids (a key, a status, a token), and
// answers a malformed id as not found: no database, no handler.
func TestBindIDs(t *testing.T) {
	env, seg, member, policy := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	tests := []struct {
		name    string
		params  map[string]string
		want    routeIDs
		wantErr error
	}{
		{"no parameters", nil, routeIDs{}, nil},
		{"an environment and a key", map[string]string{"envId": env.String(), "key": "checkout"}, routeIDs{Env: env}, nil},
		{"a segment of an environment", map[string]string{"envId": env.String(), "segmentId": seg.String()}, routeIDs{Env: env, Segment: seg}, nil},
		{"a member's policy", map[string]string{"memberId": member.String(), "policyId": policy.String()}, routeIDs{Member: member, Policy: policy}, nil},
		{"id in upper case", map[string]string{"id": "0C9E4F3A-1B2C-4D5E-8F90-A1B2C3D4E5F6"},
			routeIDs{ID: uuid.MustParse("0c9e4f3a-1b2c-4d5e-8f90-a1b2c3d4e5f6")}, nil},
		{"a status and a token are not ids", map[string]string{"status": "on", "token": "abc"}, routeIDs{}, nil},
		{"a malformed id", map[string]string{"id": "42"}, routeIDs{}, core.ErrNotFound},
		{"a malformed id after a good one", map[string]string{"envId": env.String(), "targetEnvId": "x"}, routeIDs{}, core.ErrNotFound},
		{"an empty id", map[string]string{"groupId": ""}, routeIDs{}, core.ErrNotFound},
	}
	e := echo.New()
	for _, tt := range tests {
		c := e.NewContext(httptest.NewRequest("GET", "/", nil), httptest.NewRecorder())
		var names, values []string
		for n, v := range tt.params {
			names, values = append(names, n), append(values, v)
		}
		c.SetParamNames(names...)
		c.SetParamValues(values...)
		got, err := bindIDs(c)
		if got != tt.want || !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
			t.Errorf("%s: got %+v, %v; want %+v, %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}
