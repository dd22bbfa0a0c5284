// Package openapiclient proves api/openapi.yaml usable by a standard
// generator. Its test, TestGeneratedClient, generates a client from the
// document with oapi-codegen (the version pinned in go.mod) into a temporary
// package under testdata, and runs testdata/client_test.go against a real
// server with it: sign in, create a project, a flag and a segment, read them
// back. The generated client is never committed: the API tests already
// validate every exchange against the document, and this test only has to
// show that a generated client compiles and works.
package openapiclient
