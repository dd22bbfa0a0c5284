// Package openapiclient is a client for the Bunting API generated from
// api/openapi.yaml by oapi-codegen, a standard generator, pinned in go.mod.
// It exists to prove the document: its test drives a real server with it
// (sign in, create a project, a flag and a segment, read them back). Nothing
// else imports it. Regenerate it with `make generate`; never edit
// client.gen.go.
package openapiclient

//go:generate go tool oapi-codegen -config oapi-codegen.yaml ../openapi.yaml
