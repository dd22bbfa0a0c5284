package openapiclient

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"

	"github.com/bunting-flags/bunting/api"
	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/web/httpx"
)

// TestClient drives a real server over HTTP with nothing but the client
// generated from the OpenAPI document: sign in, create a project, a flag and
// a segment, read them back, and do the same with an access token.
//
// It is the proof TestGeneratedClient (../generate_test.go) runs: that test
// generates the client next to a copy of this file and runs it there; the
// file does not build on its own.
func TestClient(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.New(t, core.ConfigurePool)
	keys, err := core.DeriveKeys(strings.Repeat("test-secret-", 4))
	must(t, err)
	st := store.New(pool, keys, slog.New(slog.DiscardHandler), core.Options{PasswordCost: bcrypt.MinCost})
	_, err = st.IAM().Bootstrap(ctx, iam.Owner{Email: "owner@example.com", Password: "owner-password"})
	must(t, err)
	// The API alone, as the server mounts it.
	log := slog.New(slog.DiscardHandler)
	e := httpx.New(log, httpx.Options{})
	e.HTTPErrorHandler = func(err error, c echo.Context) { api.WriteError(c, log, err) }
	api.New(st, log, api.Shared{}).Register(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)

	anonymous, err := NewClientWithResponses(srv.URL)
	must(t, err)
	login, err := anonymous.LoginWithResponse(ctx, LoginInput{Email: "owner@example.com", Password: "owner-password"})
	must(t, err)
	if login.JSON200 == nil {
		t.Fatalf("login: got %d %s, want 200", login.StatusCode(), login.Body)
	}
	c := authorized(t, srv.URL, "Bearer "+login.JSON200.Data.Token)

	project, err := c.CreateProjectWithResponse(ctx, nil, ProjectInput{Name: "Web shop", Key: ptr[Key]("web-shop")})
	must(t, err)
	if project.JSON200 == nil || len(project.JSON200.Data.Environments) == 0 {
		t.Fatalf("create project: got %d %s", project.StatusCode(), project.Body)
	}
	env := project.JSON200.Data.Environments[0].Id

	flag, err := c.CreateFlagWithResponse(ctx, env, nil, FlagInput{Name: "New checkout", Key: "new-checkout",
		Tags: &[]string{"checkout"}})
	must(t, err)
	if flag.JSON200 == nil {
		t.Fatalf("create flag: got %d %s", flag.StatusCode(), flag.Body)
	}

	segment, err := c.CreateSegmentWithResponse(ctx, env, nil, SegmentInput{Name: "Beta testers", Key: "beta-testers",
		Type: EnvironmentSpecific, Included: &[]string{"user-1", "user-2"}})
	must(t, err)
	if segment.JSON200 == nil {
		t.Fatalf("create segment: got %d %s", segment.StatusCode(), segment.Body)
	}

	// Read them back.
	gotProject, err := c.GetProjectWithResponse(ctx, project.JSON200.Data.Id, nil)
	must(t, err)
	if gotProject.JSON200 == nil || gotProject.JSON200.Data.Key != "web-shop" || len(gotProject.JSON200.Data.Environments) != 2 {
		t.Fatalf("get project: got %d %s, want web-shop with Prod and Dev", gotProject.StatusCode(), gotProject.Body)
	}
	gotFlag, err := c.GetFlagWithResponse(ctx, env, "new-checkout", nil)
	must(t, err)
	if f := gotFlag.JSON200; f == nil || f.Data.Name != "New checkout" || f.Data.VariationType != Boolean ||
		len(f.Data.Variations) != 2 || f.Data.IsEnabled || !slices.Equal(f.Data.Tags, []string{"checkout"}) {
		t.Fatalf("get flag: got %d %s, want the boolean flag, off, tagged checkout", gotFlag.StatusCode(), gotFlag.Body)
	}
	gotSegment, err := c.GetSegmentWithResponse(ctx, env, segment.JSON200.Data.Id, nil)
	must(t, err)
	if sg := gotSegment.JSON200; sg == nil || sg.Data.Key != "beta-testers" || !slices.Equal(sg.Data.Included, []string{"user-1", "user-2"}) {
		t.Fatalf("get segment: got %d %s", gotSegment.StatusCode(), gotSegment.Body)
	}
	flags, err := c.ListFlagsWithResponse(ctx, env, &ListFlagsParams{Tags: &[]string{"checkout"}})
	must(t, err)
	if flags.JSON200 == nil || flags.JSON200.Data.TotalCount != 1 || flags.JSON200.Data.Items[0].Key != "new-checkout" {
		t.Fatalf("list flags: got %d %s, want new-checkout", flags.StatusCode(), flags.Body)
	}

	// The other security scheme: an access token, sent bare.
	token, err := c.CreateAccessTokenWithResponse(ctx, nil, AccessTokenInput{Name: "script",
		Type: ptr(AccessTokenInputTypePersonal)})
	must(t, err)
	if token.JSON200 == nil || token.JSON200.Data.Token == "" {
		t.Fatalf("create access token: got %d %s", token.StatusCode(), token.Body)
	}
	withToken := authorized(t, srv.URL, token.JSON200.Data.Token)
	projects, err := withToken.ListProjectsWithResponse(ctx, nil)
	must(t, err)
	if projects.JSON200 == nil || len(projects.JSON200.Data) != 1 || projects.JSON200.Data[0].Key != "web-shop" {
		t.Fatalf("list projects with the token: got %d %s", projects.StatusCode(), projects.Body)
	}

	// Failures decode as documented too.
	missing, err := withToken.GetFlagWithResponse(ctx, env, "no-such-flag", nil)
	must(t, err)
	if missing.JSON404 == nil || !slices.Equal(missing.JSON404.Errors, []string{"ResourceNotFound"}) {
		t.Fatalf("get a missing flag: got %d %s, want 404 ResourceNotFound", missing.StatusCode(), missing.Body)
	}
}

// authorized is a client that sends authorization with every request.
func authorized(t *testing.T, server, authorization string) *ClientWithResponses {
	t.Helper()
	c, err := NewClientWithResponses(server, WithRequestEditorFn(
		func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", authorization)
			return nil
		}))
	must(t, err)
	return c
}

func ptr[T any](v T) *T { return &v }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
