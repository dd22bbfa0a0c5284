package sso

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// A single sign-on attempt lives in the browser that began it, not in the
// database: the workspace, the state, nonce and PKCE verifier and the page
// to come back to, sealed (AES-256-GCM under a key derived for this use
// alone), so the browser can neither read nor change it. Beginning one
// writes nothing shared, so no number of anonymous starts from however many
// addresses can fill anything a real person needs to begin theirs. The
// attempt is bound to the browser that holds it (another browser has no
// such cookie, and the callback's state must be the sealed one); web deletes
// it at the callback, and the provider takes its code once, so an attempt
// completes once.
type ssoAttempt struct {
	Workspace uuid.UUID `json:"w"`
	State     string    `json:"s"`
	Nonce     string    `json:"n"`
	Verifier  string    `json:"v"`
	Next      string    `json:"x"`
	// Expires is when the attempt stops counting, in Unix milliseconds.
	Expires int64 `json:"e"`
}

// An attempt must fit in a cookie (4,096 bytes with its name): one longer
// than maxAttemptJSON comes back to "/" instead of its long next path, and
// openAttempt looks at nothing longer than such an attempt sealed.
const (
	maxAttemptJSON   = 2900
	maxSealedAttempt = (maxAttemptJSON + 28 + 2) / 3 * 4 // nonce and tag, in base64
)

// sealAttempt is the attempt as the browser keeps it: URL-safe base64, fit
// for a cookie.
func sealAttempt(k core.Keys, a ssoAttempt) string {
	plain := encodeAttempt(a)
	if len(plain) > maxAttemptJSON {
		a.Next = "/"
		plain = encodeAttempt(a)
	}
	nonce := make([]byte, k.Attempts.NonceSize())
	rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(k.Attempts.Seal(nonce, nonce, plain, nil))
}

// openAttempt reads what sealAttempt made; false for anything else: altered,
// sealed under another server key, or not an attempt at all.
func openAttempt(k core.Keys, sealed string) (ssoAttempt, bool) {
	if len(sealed) > maxSealedAttempt {
		return ssoAttempt{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	n := k.Attempts.NonceSize()
	if err != nil || len(raw) < n {
		return ssoAttempt{}, false
	}
	plain, err := k.Attempts.Open(nil, raw[:n], raw[n:], nil)
	if err != nil {
		return ssoAttempt{}, false
	}
	var a ssoAttempt
	if json.Unmarshal(plain, &a) != nil {
		return ssoAttempt{}, false
	}
	return a, true
}

func encodeAttempt(a ssoAttempt) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a next path's & and = stay one byte each
	if err := enc.Encode(a); err != nil {
		panic(err) // strings, a uuid and a number always encode
	}
	return b.Bytes()
}
