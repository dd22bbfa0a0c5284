package api_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/webhooks"
)

// TestTimesOutOfRangeAreRefused: every time a list takes from the query,
// as Unix milliseconds or RFC 3339, is held to years 1 to 9999; past that
// (the extremes of int64 included, which PostgreSQL cannot hold) it is 400
// <parameter>_is_invalid, never a 500. The edges themselves are answered.
func TestTimesOutOfRangeAreRefused(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	e := s.prodEnv()
	e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	w := decode[webhooks.Webhook](t, s.do("POST", "/api/v1/webhooks", s.owner, map[string]any{"name": "w", "url": "https://hooks.example.com/x",
		"scopes": []string{e.env.ProjectID.String() + "/" + e.env.ID.String()}, "events": []string{"feature_flag.toggled"}, "isActive": true}).ok(t))
	base := "/api/v1/envs/" + e.env.ID.String()
	routes := map[string]func(name, value string) string{ // the route with one time parameter set
		"audit-logs": func(name, value string) string { return base + "/audit-logs?" + name + "=" + url.QueryEscape(value) },
		"deliveries": func(name, value string) string {
			return "/api/v1/webhooks/" + w.ID.String() + "/deliveries?" + name + "=" + url.QueryEscape(value)
		},
		"end users by flag": func(name, value string) string {
			q := url.Values{"featureFlagKey": {"pay"}, "from": {"1"}, "to": {"1900000000000"}}
			q.Set(name, value)
			return base + "/end-users/get-by-featureflag?" + q.Encode()
		},
		"insights": func(name, value string) string {
			q := url.Values{"featureFlagKey": {"pay"}, "intervalType": {"DAY"}, "from": {"1"}, "to": {"1900000000000"}}
			q.Set(name, value)
			return base + "/feature-flags/insights?" + q.Encode()
		},
	}
	params := map[string][]string{"audit-logs": {"from", "to"}, "deliveries": {"notBefore"}, "end users by flag": {"from", "to"}, "insights": {"from", "to"}}
	outside := []string{"-9223372036854775808", "9223372036854775807", "-62135596800001", "253402300800000", "0000-12-31T23:59:59Z"}
	for route, path := range routes {
		for _, name := range params[route] {
			for _, value := range outside {
				if value[0] == '0' && route != "audit-logs" && route != "deliveries" {
					continue // these two take RFC 3339 too; the others only milliseconds
				}
				s.do("GET", path(name, value), s.owner, nil).fails(t, http.StatusBadRequest, name+"_is_invalid")
			}
			s.do("GET", path(name, "253402300799999"), s.owner, nil).ok(t) // 9999-12-31T23:59:59.999Z
		}
	}
	s.do("GET", routes["audit-logs"]("from", "-62135596800000"), s.owner, nil).ok(t) // 0001-01-01T00:00:00Z
	s.do("GET", routes["audit-logs"]("to", "0001-01-01T00:00:00Z"), s.owner, nil).ok(t)
}
