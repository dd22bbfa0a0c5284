package api_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/web"
)

// TestCORS: a page on a listed origin may call the management API with
// credentials (its origin echoed, never "*"); other origins, and every origin
// when none is configured, get no CORS headers.
func TestCORS(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	const allowed = "https://flags.example.com"
	base, _ := url.Parse("http://bunting.test")
	withCORS := web.New(web.Config{BaseURL: base, CORSOrigins: []string{allowed}}, s.st, slog.New(slog.DiscardHandler))
	send := func(h http.Handler, method, path, origin string, headers ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		req.Header.Set("Origin", origin)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}

	rec := send(withCORS, "GET", "/api/v1/user/profile", allowed, "Authorization", s.owner)
	if rec.Code != http.StatusOK || rec.Header().Get("Access-Control-Allow-Origin") != allowed ||
		rec.Header().Get("Access-Control-Allow-Credentials") != "true" {
		t.Fatalf("allowed origin: %d %v", rec.Code, rec.Header())
	}
	rec = send(withCORS, "GET", "/api/v2/resources?spaceLevel=organization&types=env", allowed, "Authorization", s.owner)
	if rec.Code != http.StatusOK || rec.Header().Get("Access-Control-Allow-Origin") != allowed {
		t.Fatalf("v2 from the allowed origin: %d %v", rec.Code, rec.Header())
	}
	// A failure still carries the headers, so the page can read the envelope.
	rec = send(withCORS, "GET", "/api/v1/projects", allowed)
	if rec.Code != http.StatusUnauthorized || rec.Header().Get("Access-Control-Allow-Origin") != allowed {
		t.Fatalf("401 to the allowed origin: %d %v", rec.Code, rec.Header())
	}

	pre := send(withCORS, "OPTIONS", "/api/v1/projects", allowed,
		"Access-Control-Request-Method", "PUT", "Access-Control-Request-Headers", "authorization,organization,content-type")
	if pre.Code != http.StatusNoContent || pre.Header().Get("Access-Control-Allow-Origin") != allowed ||
		pre.Header().Get("Access-Control-Allow-Credentials") != "true" ||
		!strings.Contains(pre.Header().Get("Access-Control-Allow-Methods"), "PUT") ||
		!strings.Contains(pre.Header().Get("Access-Control-Allow-Headers"), "Organization") {
		t.Fatalf("preflight from the allowed origin: %d %v", pre.Code, pre.Header())
	}

	for name, rec := range map[string]*httptest.ResponseRecorder{
		"other origin":              send(withCORS, "GET", "/api/v1/user/profile", "https://evil.example.com", "Authorization", s.owner),
		"other origin's preflight":  send(withCORS, "OPTIONS", "/api/v1/projects", "https://evil.example.com", "Access-Control-Request-Method", "DELETE"),
		"look-alike origin":         send(withCORS, "GET", "/api/v1/user/profile", allowed+".evil.com", "Authorization", s.owner),
		"admin pages":               send(withCORS, "GET", "/login", allowed),
		"not configured":            send(s.e, "GET", "/api/v1/user/profile", allowed, "Authorization", s.owner),
		"not configured, preflight": send(s.e, "OPTIONS", "/api/v1/projects", allowed, "Access-Control-Request-Method", "PUT"),
	} {
		if got := rec.Header().Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("%s: Access-Control-Allow-Origin %q, want none", name, got)
		}
		if got := rec.Header().Get("Access-Control-Allow-Credentials"); got != "" {
			t.Errorf("%s: Access-Control-Allow-Credentials %q, want none", name, got)
		}
	}
	// The SDK endpoints keep their own policy: any origin, without credentials.
	rec = send(withCORS, "OPTIONS", "/api/public/sdk/server/latest-all", "https://evil.example.com", "Access-Control-Request-Method", "GET")
	if rec.Header().Get("Access-Control-Allow-Credentials") == "true" {
		t.Errorf("SDK preflight allows credentials: %v", rec.Header())
	}
}
