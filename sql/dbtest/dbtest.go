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
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bunting-flags/bunting/sql/migrations"
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
	templateMu   sync.Mutex
	templateName string
)

// template returns the template database's name, making the template when
// there is none yet or when rebuild says the known one has gone.
func template(ctx context.Context, rebuild bool) (string, error) {
	templateMu.Lock()
	defer templateMu.Unlock()
	if templateName != "" && !rebuild {
		return templateName, nil
	}
	name, err := ensureTemplate(ctx)
	if err != nil {
		return "", err
	}
	templateName = name
	return name, nil
}

// New returns a pool on a fresh database with every migration applied, made
// with configure (pass store.ConfigurePool, as the server does); the database
// is dropped when the test ends.
func New(t testing.TB, configure func(*pgxpool.Config)) *pgxpool.Pool {
	t.Helper()
	url, name := NewDatabase(t)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	configure(cfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
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
	tmpl, err := template(ctx, false)
	if err != nil {
		t.Fatalf("template database: %v", err)
	}
	name := "bunting_test_" + strings.ToLower(rand.Text()[:12])
	admin, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		t.Fatalf("connect to the test server (set BUNTING_TEST_DATABASE_URL?): %v", err)
	}
	defer admin.Close(ctx)
	create := func(tmpl string) error {
		_, err := admin.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s TEMPLATE %s`, name, tmpl))
		return err
	}
	err = create(tmpl)
	// A test run of another checkout with older clean-up code may have
	// dropped the template: make it again, once.
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "3D000" { // undefined database
		if tmpl, err = template(ctx, true); err == nil {
			err = create(tmpl)
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
// migration makes a new one.
func ensureTemplate(ctx context.Context) (string, error) {
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
	_, err = migrations.Apply(ctx, pool)
	pool.Close()
	if err != nil {
		return "", err
	}
	// The comment dates the template for the clean-up below.
	if _, err := admin.Exec(ctx, fmt.Sprintf(`COMMENT ON DATABASE %s IS 'bunting test template %d'`, building, time.Now().Unix())); err != nil {
		return "", err
	}
	// Renaming last makes the template appear only once it is complete.
	if _, err := admin.Exec(ctx, `ALTER DATABASE `+building+` RENAME TO `+name); err != nil {
		return "", err
	}
	// Templates of other migrations are dropped once they are a day old: a
	// younger one may belong to another checkout (a branch with other
	// migrations) running its tests on the same server right now.
	rows, err := admin.Query(ctx, `SELECT datname FROM pg_database
		WHERE datname LIKE 'bunting_template_%' AND datname <> $1
		  AND shobj_description(oid, 'pg_database') LIKE 'bunting test template %'
		  AND split_part(shobj_description(oid, 'pg_database'), ' ', 4)::bigint < $2`, name, time.Now().Add(-24*time.Hour).Unix())
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
