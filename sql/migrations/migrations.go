// Package migrations embeds the schema migrations; sqlc reads the same files as the schema.
package migrations

import "embed"

// FS holds the append-only migration files, applied in name order.
//
//go:embed *.sql
var FS embed.FS
