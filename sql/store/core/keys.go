package core

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/db"
)

// MinSecretKeyLen is the shortest BUNTING_SECRET_KEY accepted.
const MinSecretKeyLen = 32

// LoadSecretKey returns the configured secret key or, when none is configured,
// the one kept in the database, generating it on first start. Concurrent first
// starts agree on a single key because only the first insert wins.
func LoadSecretKey(ctx context.Context, pool *pgxpool.Pool, configured string) (string, error) {
	if configured != "" {
		return configured, nil
	}
	q := db.New(pool)
	if err := q.InsertSettingIfAbsent(ctx, db.InsertSettingIfAbsentParams{Name: "secret_key", Value: rand.Text() + rand.Text()}); err != nil {
		return "", fmt.Errorf("store secret key: %w", err)
	}
	key, err := q.GetSetting(ctx, "secret_key")
	if err != nil {
		return "", fmt.Errorf("read secret key: %w", err)
	}
	return key, nil
}

// Keys are the purpose-bound keys derived from the server secret, so that no
// two uses share key material.
type Keys struct {
	// Session signs API session tokens.
	Session []byte
	// CookieHash and CookieBlock authenticate and encrypt browser session cookies.
	CookieHash, CookieBlock []byte
	// CSRF authenticates the admin pages' anti-forgery cookie.
	CSRF []byte
	seal cipher.AEAD
	// attempts seals the single sign-on attempts browsers keep (sso_attempt.go).
	Attempts cipher.AEAD
}

// DeriveKeys derives every key Bunting uses from the server secret with HKDF-SHA256.
func DeriveKeys(secret string) (Keys, error) {
	if len(secret) < MinSecretKeyLen {
		return Keys{}, fmt.Errorf("secret key must be at least %d characters", MinSecretKeyLen)
	}
	derive := func(purpose string, n int) []byte {
		k, err := hkdf.Key(sha256.New, []byte(secret), nil, "bunting "+purpose, n)
		if err != nil {
			panic(err) // only for n larger than HKDF allows, which these constants are not
		}
		return k
	}
	aead := func(purpose string) cipher.AEAD {
		block, err := aes.NewCipher(derive(purpose, 32))
		if err != nil {
			panic(err) // only for a key size AES refuses, which 32 is not
		}
		gcm, err := cipher.NewGCM(block)
		if err != nil {
			panic(err) // only for a block size GCM refuses, which AES's is not
		}
		return gcm
	}
	return Keys{
		Session:     derive("session", 32),
		CookieHash:  derive("cookie hash", 32),
		CookieBlock: derive("cookie block", 32),
		CSRF:        derive("csrf", 32),
		seal:        aead("seal"),
		Attempts:    aead("sso attempt"),
	}, nil
}

// Seal encrypts a secret for storage (AES-256-GCM, random nonce).
func (k Keys) Seal(plain string) string {
	nonce := make([]byte, k.seal.NonceSize())
	rand.Read(nonce)
	return base64.RawStdEncoding.EncodeToString(k.seal.Seal(nonce, nonce, []byte(plain), nil))
}

// Open decrypts what Seal produced.
func (k Keys) Open(sealed string) (string, error) {
	raw, err := base64.RawStdEncoding.DecodeString(sealed)
	if err != nil || len(raw) < k.seal.NonceSize() {
		return "", errors.New("sealed value is malformed")
	}
	plain, err := k.seal.Open(nil, raw[:k.seal.NonceSize()], raw[k.seal.NonceSize():], nil)
	if err != nil {
		return "", errors.New("sealed value does not open with this key")
	}
	return string(plain), nil
}
