package store

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/sql/dbtest"
)

// testStore is a Store over a fresh database with its owner signed in.
func testStore(t testing.TB) (*Store, *Actor, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.New(t, ConfigurePool)
	keys, err := DeriveKeys(strings.Repeat("store-test-", 4))
	if err != nil {
		t.Fatal(err)
	}
	s := New(pool, keys, slog.New(slog.DiscardHandler), Options{PasswordCost: bcrypt.MinCost, LoginDelayStep: time.Millisecond})
	if _, err := s.Bootstrap(ctx, Owner{Email: "owner@example.com", Password: "owner-password"}); err != nil {
		t.Fatal(err)
	}
	session, err := s.Login(ctx, LoginInput{Email: "owner@example.com", Password: "owner-password"}, "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Authenticate(ctx, Credentials{Authorization: "Bearer " + session.Token})
	if err != nil {
		t.Fatal(err)
	}
	return s, a, pool
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestJSONColumnsReadAsSent reads json and jsonb through a configured pool:
// into json.RawMessage as PostgreSQL wrote them (SQL NULL as nil), into
// anything else decoded.
func TestJSONColumnsReadAsSent(t *testing.T) {
	_, _, pool := testStore(t)
	ctx := context.Background()
	var b, j, null json.RawMessage
	var decoded map[string][]int
	err := pool.QueryRow(ctx, `SELECT '{"a":[1,2]}'::jsonb, '{"a":[1, 2] }'::json, NULL::jsonb, '{"a":[3]}'::jsonb`).Scan(&b, &j, &null, &decoded)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"a": [1, 2]}` || string(j) != `{"a":[1, 2] }` || null != nil || len(decoded["a"]) != 1 || decoded["a"][0] != 3 {
		t.Errorf("got %s, %s, %v, %v", b, j, null, decoded)
	}
}
