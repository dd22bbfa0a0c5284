// Package dbtest gives each test its own real PostgreSQL database, cloned from
// a template that has every migration applied, so tests are isolated and fast.
package dbtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/migrations"
	"github.com/bunting-flags/bunting/sql/store"
)

// templateLock serializes test processes creating the template database.
const templateLock = 7_303_052_199

// ServerURL is the PostgreSQL server tests use: BUNTING_TEST_DATABASE_URL, or
// the local server.
func ServerURL() string {
	if u := os.Getenv("BUNTING_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

var (
	templateOnce sync.Once
	templateName string
	templateErr  error
)

// New returns a pool on a fresh database with every migration applied; the
// database is dropped when the test ends.
func New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	url, name := NewDatabase(t)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatalf("connect to %s: %v", name, err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// NewDatabase creates a fresh migrated database and returns its URL and name;
// it is dropped when the test ends.
func NewDatabase(t testing.TB) (string, string) {
	t.Helper()
	ctx := context.Background()
	templateOnce.Do(func() { templateName, templateErr = ensureTemplate(ctx, true) })
	if templateErr != nil {
		t.Fatalf("template database: %v", templateErr)
	}
	name := "bunting_test_" + strings.ToLower(rand.Text()[:12])
	admin, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		t.Fatalf("connect to the test server (set BUNTING_TEST_DATABASE_URL?): %v", err)
	}
	defer admin.Close(ctx)
	_, err = admin.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s TEMPLATE %s`, name, templateName))
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "3D000" {
		// A test run of another checkout, with other migrations, dropped our
		// template as stale: build it again, leaving theirs alone, and retry once.
		if _, err = ensureTemplate(ctx, false); err == nil {
			_, err = admin.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s TEMPLATE %s`, name, templateName))
		}
	}
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, ServerURL())
		if err != nil {
			t.Errorf("drop %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, name)); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	return databaseURL(name), name
}

// databaseURL is ServerURL (a postgres:// URL) with its database replaced.
func databaseURL(name string) string {
	u, err := url.Parse(ServerURL())
	if err != nil {
		panic(fmt.Sprintf("BUNTING_TEST_DATABASE_URL must be a postgres:// URL: %v", err))
	}
	u.Path = "/" + name
	return u.String()
}

// ensureTemplate creates the template database for the current migrations
// unless it exists; its name carries a hash of the migrations, so a changed
// migration makes a new one. dropStale drops the templates of other migrations.
func ensureTemplate(ctx context.Context, dropStale bool) (string, error) {
	h := sha256.New()
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return "", err
	}
	for _, n := range names {
		b, _ := fs.ReadFile(migrations.FS, n)
		h.Write([]byte(n))
		h.Write(b)
	}
	name := "bunting_template_" + hex.EncodeToString(h.Sum(nil))[:12]

	admin, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		return "", err
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `SELECT pg_advisory_lock($1)`, templateLock); err != nil {
		return "", err
	}
	defer admin.Exec(ctx, `SELECT pg_advisory_unlock($1)`, templateLock)

	var exists bool
	if err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil || exists {
		return name, err
	}
	building := name + "_building"
	if _, err := admin.Exec(ctx, `DROP DATABASE IF EXISTS `+building+` WITH (FORCE)`); err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+building); err != nil {
		return "", err
	}
	pool, err := pgxpool.New(ctx, databaseURL(building))
	if err != nil {
		return "", err
	}
	_, err = store.Migrate(ctx, pool)
	pool.Close()
	if err != nil {
		return "", err
	}
	// Renaming last makes the template appear only once it is complete.
	if _, err := admin.Exec(ctx, `ALTER DATABASE `+building+` RENAME TO `+name); err != nil {
		return "", err
	}
	if !dropStale {
		return name, nil
	}
	// Templates of older migrations are no longer needed.
	rows, err := admin.Query(ctx, `SELECT datname FROM pg_database WHERE datname LIKE 'bunting_template_%' AND datname <> $1`, name)
	if err != nil {
		return "", err
	}
	stale, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", err
	}
	for _, s := range stale {
		admin.Exec(ctx, `DROP DATABASE IF EXISTS `+s)
	}
	return name, nil
}
