package web_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/bunting-flags/bunting/sql/store/iam"
)

var (
	rsaKeysOnce sync.Once
	rsaKeys     []*rsa.PrivateKey
	rsaKeysNext int
	rsaKeysMu   sync.Mutex
)

// oidcProvider is a small but real OpenID Connect provider on loopback:
// discovery, a key set, an authorization endpoint that answers at once (as
// if the person were signed in there) and a token endpoint that checks the
// client's authentication, the code and its PKCE verifier, and issues an id
// token signed with its key. Tests set its knobs to make it misbehave.
type oidcProvider struct {
	t      *testing.T
	srv    *httptest.Server
	issuer string
	// clientID and secret are the registered client; method is the client
	// authentication the token endpoint requires.
	clientID, secret, method string

	key, otherKey *rsa.PrivateKey

	mu             sync.Mutex
	grants         map[string]grant
	authorizations []url.Values
	tokenRequests  int
	// The person signing in.
	email, name string
	// Knobs: answer the authorization with this error; change the id token's
	// claims; sign with this key instead; answer the token request or the key
	// set with this status; serve no discovery document.
	authorizeError string
	tweak          func(claims map[string]any)
	signer         *rsa.PrivateKey
	tokenStatus    int
	keysStatus     int
	noDiscovery    bool
	// discoveries and keyReads count the requests for the discovery
	// document and for the key set.
	discoveries, keyReads int
}

type grant struct{ nonce, challenge, redirectURI string }

const providerKeyID = "bunting-test-key"

// newOIDCProvider serves a provider whose endpoints live under prefix (like a
// realm), reachable at host ("127.0.0.1" or "localhost").
func newOIDCProvider(t *testing.T, host, prefix string) *oidcProvider {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	_, port, _ := net.SplitHostPort(l.Addr().String())
	p := &oidcProvider{t: t, issuer: "http://" + net.JoinHostPort(host, port) + prefix,
		clientID: "bunting-client", secret: "provider-secret-" + rand.Text(), method: iam.ClientSecretBasic,
		key: rsaKey(t), otherKey: rsaKey(t), grants: map[string]grant{}, email: "sso.person@example.com", name: "SSO Person"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+prefix+"/.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET "+prefix+"/keys", p.keys)
	mux.HandleFunc("GET "+prefix+"/protocol/openid-connect/auth", p.authorize)
	mux.HandleFunc("POST "+prefix+"/protocol/openid-connect/token", p.token)
	p.srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: mux}}
	p.srv.Start()
	t.Cleanup(p.srv.Close)
	return p
}

// rsaKey hands out keys from a small pool made once: generating RSA keys
// under the race detector is slow, and tests only need two that differ.
func rsaKey(t *testing.T) *rsa.PrivateKey {
	rsaKeysOnce.Do(func() {
		for range 2 {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			rsaKeys = append(rsaKeys, k)
		}
	})
	rsaKeysMu.Lock()
	defer rsaKeysMu.Unlock()
	rsaKeysNext++
	return rsaKeys[rsaKeysNext%2]
}

func (p *oidcProvider) authEndpoint() string { return p.issuer + "/protocol/openid-connect/auth" }

func (p *oidcProvider) tokenEndpoint() string { return p.issuer + "/protocol/openid-connect/token" }

// reset puts every knob back.
func (p *oidcProvider) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.authorizeError, p.tweak, p.signer, p.tokenStatus, p.keysStatus, p.noDiscovery = "", nil, nil, 0, 0, false
}

// set changes knobs under the lock.
func (p *oidcProvider) set(f func(p *oidcProvider)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

func (p *oidcProvider) discovery(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	off := p.noDiscovery
	p.discoveries++
	p.mu.Unlock()
	if off {
		http.NotFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer": p.issuer, "authorization_endpoint": p.authEndpoint(), "token_endpoint": p.tokenEndpoint(),
		"jwks_uri": p.issuer + "/keys", "response_types_supported": []string{"code"},
		"subject_types_supported": []string{"public"}, "id_token_signing_alg_values_supported": []string{"RS256"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{iam.ClientSecretBasic, iam.ClientSecretPost},
	})
}

func (p *oidcProvider) keys(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	status, key := p.keysStatus, p.key
	p.keyReads++
	p.mu.Unlock()
	if status != 0 {
		http.Error(w, "keys unavailable: "+providerDetail, status)
		return
	}
	writeJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &key.PublicKey, KeyID: providerKeyID, Algorithm: string(jose.RS256), Use: "sig"}}})
}

// authorize answers at once with a code (or the error knob) for the redirect URI.
func (p *oidcProvider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.authorizations = append(p.authorizations, q)
	scopes := strings.Fields(q.Get("scope"))
	if q.Get("response_type") != "code" || q.Get("client_id") != p.clientID || q.Get("redirect_uri") == "" ||
		q.Get("state") == "" || q.Get("nonce") == "" || q.Get("code_challenge_method") != "S256" ||
		q.Get("code_challenge") == "" || !slices.Contains(scopes, "openid") {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	answer := url.Values{"state": {q.Get("state")}}
	if p.authorizeError != "" {
		answer.Set("error", p.authorizeError)
		answer.Set("error_description", "The person declined.")
	} else {
		code := rand.Text()
		p.grants[code] = grant{nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirectURI: q.Get("redirect_uri")}
		answer.Set("code", code)
	}
	back.RawQuery = answer.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// token checks the client, the code and the PKCE verifier, and issues an id token.
func (p *oidcProvider) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tokenRequests++
	var id, secret string
	switch p.method {
	case iam.ClientSecretBasic:
		user, pass, ok := r.BasicAuth()
		if !ok || r.PostForm.Has("client_secret") {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
			return
		}
		id, _ = url.QueryUnescape(user) // RFC 6749 §2.3.1: form-encoded, then Basic
		secret, _ = url.QueryUnescape(pass)
	case iam.ClientSecretPost:
		if r.Header.Get("Authorization") != "" {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
			return
		}
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != p.clientID || secret != p.secret {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	if p.tokenStatus != 0 {
		writeJSON(w, p.tokenStatus, map[string]string{"error": "invalid_grant", "error_description": providerDetail})
		return
	}
	g, ok := p.grants[r.PostForm.Get("code")]
	delete(p.grants, r.PostForm.Get("code"))
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	if !ok || r.PostForm.Get("grant_type") != "authorization_code" || r.PostForm.Get("redirect_uri") != g.redirectURI ||
		base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	}
	now := time.Now()
	claims := map[string]any{"iss": p.issuer, "sub": "subject-" + p.email, "aud": p.clientID,
		"exp": now.Add(5 * time.Minute).Unix(), "iat": now.Unix(), "nonce": g.nonce,
		"email": p.email, "email_verified": true, "name": p.name}
	if p.tweak != nil {
		p.tweak(claims)
	}
	key := p.key
	if p.signer != nil {
		key = p.signer
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: providerKeyID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		p.t.Errorf("signer: %v", err)
		return
	}
	payload, _ := json.Marshal(claims)
	jws, err := signer.Sign(payload)
	if err != nil {
		p.t.Errorf("sign: %v", err)
		return
	}
	idToken, _ := jws.CompactSerialize()
	writeJSON(w, http.StatusOK, map[string]any{"access_token": "access-" + rand.Text(), "token_type": "Bearer",
		"expires_in": 300, "id_token": idToken})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// logRecorder keeps what Bunting logs, to check that failures say why.
type logRecorder struct {
	mu      sync.Mutex
	records []map[string]string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }

func (l *logRecorder) WithGroup(string) slog.Handler { return l }

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	m := map[string]string{"msg": r.Message}
	r.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.Resolve().String()
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, m)
	return nil
}

// reasons lists the reasons of the refused sign-ins logged so far.
func (l *logRecorder) reasons() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.records {
		if r["msg"] == "single sign-on refused" {
			out = append(out, r["reason"])
		}
	}
	return out
}

// mentions tells whether any record carries s.
func (l *logRecorder) mentions(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.records {
		for _, v := range r {
			if strings.Contains(v, s) {
				return true
			}
		}
	}
	return false
}
