package web_test

import (
	"testing"
)

// memberID is the id of the user with that email.
func memberID(t *testing.T, a *app, email string) string {
	t.Helper()
	var id string
	must(t, a.pool.QueryRow(t.Context(), `SELECT id::text FROM users WHERE email = $1`, email).Scan(&id))
	return id
}
