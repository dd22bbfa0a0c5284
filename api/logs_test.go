package api_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/web/httpx/httpxtest"
)

// TestSecretsAreNeverLogged drives sign-in, tokens, secrets and SSO settings
// through a server logging at debug level, including failures, and finds
// none of the secrets in the log.
func TestSecretsAreNeverLogged(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	var logs httpxtest.LogBuffer
	s.e = newHandler(s.st, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))

	session := s.login(ownerEmail, ownerPassword)
	s.do("POST", "/api/v1/identity/login-by-email", "", map[string]string{"email": ownerEmail, "password": "wrong-secret-password"})
	tok := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", session, map[string]string{"name": "ci", "type": "Personal"}).ok(t))
	s.do("GET", "/api/v1/projects", tok.Token, nil).ok(t)
	s.do("GET", "/api/v1/projects", "Bearer api-not-a-real-token-but-still-secret-0000000", nil)
	env := decode[core.Project](t, s.do("POST", "/api/v1/projects", tok.Token, map[string]string{"name": "Web", "key": "web"}).ok(t)).Environments[0]
	s.do("PUT", "/api/v1/workspaces/sso-oidc", session, map[string]string{"clientId": "c", "clientSecret": "oidc-client-secret-value",
		"authorizationEndpoint": "https://id.example.com/a", "tokenEndpoint": "https://id.example.com/t", "clientAuthenticationMethod": "client_secret_post"}).ok(t)
	s.do("PUT", "/api/v1/identity/reset-password", session, map[string]string{"currentPassword": ownerPassword, "newPassword": "another-secret-password"}).ok(t)

	out := logs.String()
	if !strings.Contains(out, "/api/v1/projects") {
		t.Fatalf("the log has no request lines; the test would prove nothing:\n%s", out)
	}
	for what, secret := range map[string]string{
		"password": ownerPassword, "wrong password": "wrong-secret-password", "new password": "another-secret-password",
		"session token": strings.TrimPrefix(session, "Bearer "), "access token": tok.Token, "unknown token": "api-not-a-real-token",
		"environment secret": env.Secrets[0].Value, "OIDC client secret": "oidc-client-secret-value",
	} {
		if strings.Contains(out, secret) {
			t.Errorf("the %s appears in the log", what)
		}
	}
}
