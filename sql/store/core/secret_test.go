package core

import (
	"regexp"
	"testing"

	"github.com/google/uuid"
)

// FeatBit's own test data (ES/Domain/Shared/TestData.cs): secrets and the
// environment ids their second half encodes.
func TestSecretFormatMatchesFeatBit(t *testing.T) {
	tests := []struct{ secret, envID string }{
		{"v3faJy3RCUO8d-EJiVdN6waRfGjfNan02Ms9c0LiTD6w", "8dc61769-5af3-4d9f-8cb3-d7342e24c3eb"},
		{"gpnOV3wI3kKAO9q9viC0wQWdKZrVAf2U6gAnxl4lSH3w", "ad99d259-1f50-4ed9-a002-7c65e25487df"},
	}
	for _, tt := range tests {
		want := uuid.MustParse(tt.envID)
		got, ok := SecretEnvID(tt.secret)
		if !ok || got != want {
			t.Errorf("SecretEnvID(%q) = %v, %v; want %v", tt.secret, got, ok, want)
		}
		if enc := encodeGUID(want); enc != tt.secret[22:] {
			t.Errorf("encodeGUID(%v) = %q, want %q", want, enc, tt.secret[22:])
		}
	}
}

func TestNewSecretValue(t *testing.T) {
	format := regexp.MustCompile(`^[A-Za-z0-9_-]{44}$`)
	env := uuid.New()
	seen := map[string]bool{}
	for range 100 {
		s := NewSecretValue(env)
		if !format.MatchString(s) {
			t.Fatalf("secret %q is not 44 URL-safe characters", s)
		}
		if got, ok := SecretEnvID(s); !ok || got != env {
			t.Fatalf("SecretEnvID(%q) = %v, want %v", s, got, env)
		}
		if seen[s] {
			t.Fatalf("secret %q issued twice", s)
		}
		seen[s] = true
	}
	for _, bad := range []string{"", "short", "v3faJy3RCUO8d-EJiVdN6waRfGjfNan02Ms9c0LiTD6", "v3faJy3RCUO8d-EJiVdN6w!!!!!!!!!!!!!!!!!!!!!"} {
		if _, ok := SecretEnvID(bad); ok {
			t.Errorf("SecretEnvID(%q) accepted a malformed secret", bad)
		}
	}
}
