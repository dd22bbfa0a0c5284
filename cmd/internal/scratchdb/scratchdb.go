// Package scratchdb makes the throwaway databases the development commands
// run Bunting on (bunting-bench, featbit-ui): a fresh, empty database on a
// PostgreSQL server, dropped when the run ends.
package scratchdb

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Create makes an empty database named prefix and a random suffix on the
// server of serverURL and returns its URL, its name and the function that
// drops it (which does nothing when keep).
func Create(ctx context.Context, serverURL, prefix string, keep bool) (dbURL, name string, drop func(), err error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", "", nil, fmt.Errorf("database URL: %w", err)
	}
	name = prefix + strings.ToLower(rand.Text()[:10])
	admin, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return "", "", nil, fmt.Errorf("connect to %s: %w", u.Redacted(), err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	drop = func() {
		if keep {
			return
		}
		// The run's context may be cancelled already (Ctrl-C); dropping must still happen.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, serverURL); err == nil {
			c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(ctx)
		}
	}
	u.Path = "/" + name
	return u.String(), name, drop, nil
}
