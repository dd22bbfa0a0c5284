package web_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/bunting-flags/bunting/web/oidcflow/oidctest"
)

// oidcProvider is the real OpenID Connect provider on loopback the single
// sign-on tests sign in with (shared with the API's tests).
type oidcProvider = oidctest.Provider

// newOIDCProvider serves a provider whose endpoints live under prefix (like a
// realm), reachable at host ("127.0.0.1" or "localhost").
func newOIDCProvider(t *testing.T, host, prefix string) *oidcProvider {
	t.Helper()
	return oidctest.New(t, host, prefix)
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
