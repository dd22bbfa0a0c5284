// Package oidctest serves a small but real OpenID Connect provider on
// loopback for tests of single sign-on, the pages' and the API's alike.
package oidctest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/go-jose/go-jose/v4"
)

var (
	rsaKeysOnce sync.Once
	rsaKeys     []*rsa.PrivateKey
	rsaKeysNext int
	rsaKeysMu   sync.Mutex
)

// Provider is a small but real OpenID Connect provider on loopback:
// discovery, a key set, an authorization endpoint that answers at once (as
// if the person were signed in there) and a token endpoint that checks the
// client's authentication, the code and its PKCE verifier, and issues an id
// token signed with its key. Tests set its knobs to make it misbehave.
type Provider struct {
	t      *testing.T
	Srv    *httptest.Server
	Issuer string
	// ClientID and Secret are the registered client; Method is the client
	// authentication the token endpoint requires.
	ClientID, Secret, Method string

	Key, OtherKey *rsa.PrivateKey

	// Mu guards what follows; tests change knobs with Set.
	Mu             sync.Mutex
	grants         map[string]grant
	Authorizations []url.Values
	TokenRequests  int
	// The person signing in.
	Email, Name string
	// Knobs: answer the authorization with this error; change the id token's
	// claims; sign with this key instead; answer the token request or the key
	// set with this status; serve no discovery document.
	AuthorizeError string
	Tweak          func(claims map[string]any)
	Signer         *rsa.PrivateKey
	TokenStatus    int
	KeysStatus     int
	NoDiscovery    bool
	// Discoveries and KeyReads count the requests for the discovery
	// document and for the key set.
	Discoveries, KeyReads int
}

type grant struct{ nonce, challenge, redirectURI string }

// KeyID names the key the provider signs with.
const KeyID = "bunting-test-key"

// New serves a provider whose endpoints live under prefix (like a
// realm), reachable at host ("127.0.0.1" or "localhost").
func New(t *testing.T, host, prefix string) *Provider {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	p := &Provider{t: t, Issuer: "http://" + net.JoinHostPort(host, port) + prefix,
		ClientID: "bunting-client", Secret: "provider-secret-" + rand.Text(), Method: iam.ClientSecretBasic,
		Key: rsaKey(t), OtherKey: rsaKey(t), grants: map[string]grant{}, Email: "sso.person@example.com", Name: "SSO Person"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+prefix+"/.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET "+prefix+"/keys", p.keys)
	mux.HandleFunc("GET "+prefix+"/protocol/openid-connect/auth", p.authorize)
	mux.HandleFunc("POST "+prefix+"/protocol/openid-connect/token", p.token)
	p.Srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: mux}}
	p.Srv.Start()
	t.Cleanup(p.Srv.Close)
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

func (p *Provider) AuthEndpoint() string { return p.Issuer + "/protocol/openid-connect/auth" }

func (p *Provider) TokenEndpoint() string { return p.Issuer + "/protocol/openid-connect/token" }

// Reset puts every knob back.
func (p *Provider) Reset() {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	p.AuthorizeError, p.Tweak, p.Signer, p.TokenStatus, p.KeysStatus, p.NoDiscovery = "", nil, nil, 0, 0, false
}

// Set changes knobs under the lock.
func (p *Provider) Set(f func(p *Provider)) {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	f(p)
}

func (p *Provider) discovery(w http.ResponseWriter, r *http.Request) {
	p.Mu.Lock()
	off := p.NoDiscovery
	p.Discoveries++
	p.Mu.Unlock()
	if off {
		http.NotFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer": p.Issuer, "authorization_endpoint": p.AuthEndpoint(), "token_endpoint": p.TokenEndpoint(),
		"jwks_uri": p.Issuer + "/keys", "response_types_supported": []string{"code"},
		"subject_types_supported": []string{"public"}, "id_token_signing_alg_values_supported": []string{"RS256"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{iam.ClientSecretBasic, iam.ClientSecretPost},
	})
}

func (p *Provider) keys(w http.ResponseWriter, r *http.Request) {
	p.Mu.Lock()
	status, key := p.KeysStatus, p.Key
	p.KeyReads++
	p.Mu.Unlock()
	if status != 0 {
		http.Error(w, "keys unavailable: "+Detail, status)
		return
	}
	writeJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &key.PublicKey, KeyID: KeyID, Algorithm: string(jose.RS256), Use: "sig"}}})
}

// authorize answers at once with a code (or the error knob) for the redirect URI.
func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p.Mu.Lock()
	defer p.Mu.Unlock()
	p.Authorizations = append(p.Authorizations, q)
	scopes := strings.Fields(q.Get("scope"))
	if q.Get("response_type") != "code" || q.Get("client_id") != p.ClientID || q.Get("redirect_uri") == "" ||
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
	if p.AuthorizeError != "" {
		answer.Set("error", p.AuthorizeError)
		answer.Set("error_description", "The person declined.")
	} else {
		code := rand.Text()
		p.grants[code] = grant{nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirectURI: q.Get("redirect_uri")}
		answer.Set("code", code)
	}
	// The redirect URI's own query stays (RFC 6749 §3.1.2): FeatBit's UI
	// marks its sign-in page's URL with ?sso-logged-in=true.
	kept := back.Query()
	for k, v := range answer {
		kept[k] = v
	}
	back.RawQuery = kept.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// token checks the client, the code and the PKCE verifier, and issues an id token.
func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	p.Mu.Lock()
	defer p.Mu.Unlock()
	p.TokenRequests++
	var id, secret string
	switch p.Method {
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
	if id != p.ClientID || secret != p.Secret {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	if p.TokenStatus != 0 {
		writeJSON(w, p.TokenStatus, map[string]string{"error": "invalid_grant", "error_description": Detail})
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
	claims := map[string]any{"iss": p.Issuer, "sub": "subject-" + p.Email, "aud": p.ClientID,
		"exp": now.Add(5 * time.Minute).Unix(), "iat": now.Unix(), "nonce": g.nonce,
		"email": p.Email, "email_verified": true, "name": p.Name}
	if p.Tweak != nil {
		p.Tweak(claims)
	}
	key := p.Key
	if p.Signer != nil {
		key = p.Signer
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: KeyID}},
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

// Detail stands for whatever an internal service answers: it must never
// reach a page, an API answer or a log.
const Detail = "internal-detail-7f3a"

// URL is the provider's base address (its issuer without the path).
func (p *Provider) URL() string { return p.Srv.URL }

// Reads is how often the provider was asked for its discovery document and
// its key set.
func (p *Provider) Reads() (discoveries, keyReads int) {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	return p.Discoveries, p.KeyReads
}
