package api_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/api"
	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagsascode"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// send sends a request whose answer may be other than the JSON envelope (a
// YAML export), validated against the OpenAPI document as do validates.
func (s *server) send(method, path, token, contentType string, body []byte) *httptest.ResponseRecorder {
	s.t.Helper()
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Authorization", token)
	sent := req.Header.Clone()
	rec := httptest.NewRecorder()
	s.e.ServeHTTP(rec, req)
	s.validate(method, path, sent, body, rec)
	return rec
}

// TestExportImportThroughTheAPI: an access token's rights decide: one that
// may only read Dev is refused Prod's export (403) and any import that
// creates flags (403, nothing written); the owner's token exports Prod as
// YAML and JSON, and imports the YAML into Dev, whose flag the SDKs are
// told of. A dry run answers the plan and changes nothing; a broken file
// is refused 400 with its path.
func TestExportImportThroughTheAPI(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	p := s.createProject("Web", "web")
	prod, dev := p.Environments[0], p.Environments[1]
	s.do("POST", "/api/v1/envs/"+prod.ID.String()+"/segments", s.owner, map[string]any{"name": "Beta", "key": "beta",
		"type": "environment-specific", "included": []string{"u1"}}).ok(t)
	s.do("POST", "/api/v1/envs/"+prod.ID.String()+"/feature-flags", s.owner, map[string]any{"name": "Checkout", "key": "checkout", "isEnabled": true}).ok(t)

	onlyReadDev := []access.Statement{
		{ID: "1", ResourceType: "project", Effect: "allow", Actions: []string{"CanAccessProject"}, Resources: []string{"project/*"}},
		{ID: "2", ResourceType: "env", Effect: "allow", Actions: []string{"CanAccessEnv"}, Resources: []string{"project/*:env/dev"}},
	}
	reader := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]any{"name": "reader", "type": "Service", "permissions": onlyReadDev}).ok(t))
	full := decode[accesstokens.AccessToken](t, s.do("POST", "/api/v1/access-tokens", s.owner, map[string]any{"name": "ci", "type": "Service",
		"permissions": []access.Statement{{ID: "1", ResourceType: "*", Effect: "allow", Actions: []string{"*"}, Resources: []string{"*"}}}}).ok(t))

	s.do("GET", "/api/v1/envs/"+prod.ID.String()+"/export", reader.Token, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("POST", "/api/v1/envs/"+prod.ID.String()+"/import", reader.Token, map[string]any{"version": 1}).fails(t, http.StatusForbidden, "Forbidden")

	rec := s.send("GET", "/api/v1/envs/"+prod.ID.String()+"/export?format=yaml", full.Token, "", nil)
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/yaml") {
		t.Fatalf("YAML export: got %d %q %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	text := rec.Body.Bytes()
	for _, want := range []string{"version: 1\n", "  - key: beta\n", "  - key: checkout\n", "    isEnabled: true\n"} {
		if !bytes.Contains(text, []byte(want)) {
			t.Errorf("YAML export lacks %q:\n%s", want, text)
		}
	}
	doc := decode[flagsascode.Document](t, s.do("GET", "/api/v1/envs/"+prod.ID.String()+"/export", full.Token, nil).ok(t))
	if len(doc.Flags) != 1 || len(doc.Segments) != 1 || doc.Environment.Key != "prod" {
		t.Fatalf("JSON export %+v, want prod's flag and segment", doc)
	}
	project := decode[flagsascode.ProjectDocument](t, s.do("GET", "/api/v1/projects/"+p.ID.String()+"/export", full.Token, nil).ok(t))
	if len(project.Environments) != 2 || project.Environments[0].Environment.Key != "prod" || len(project.Environments[0].Flags) != 1 {
		t.Fatalf("project export %+v, want prod and dev", project)
	}

	// The reader may read Dev, but not create flags there.
	rec = s.send("POST", "/api/v1/envs/"+dev.ID.String()+"/import", reader.Token, "application/yaml", text)
	if rec.Code != http.StatusForbidden {
		t.Fatalf("import without the rights: got %d %s, want 403", rec.Code, rec.Body)
	}
	if n := s.count(`SELECT count(*) FROM feature_flags WHERE env_id = $1`, dev.ID); n != 0 {
		t.Fatalf("a refused import left %d flags", n)
	}

	rec = s.send("POST", "/api/v1/envs/"+dev.ID.String()+"/import?dryRun=true", full.Token, "application/yaml", text)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"applied":false`) || !strings.Contains(rec.Body.String(), `"action":"create"`) {
		t.Fatalf("dry run: got %d %s", rec.Code, rec.Body)
	}
	if n := s.count(`SELECT count(*) FROM feature_flags WHERE env_id = $1`, dev.ID); n != 0 {
		t.Fatalf("a dry run left %d flags", n)
	}

	told := listenChanges(t, s, dev.ID)
	rec = s.send("POST", "/api/v1/envs/"+dev.ID.String()+"/import?comment=from+git", full.Token, "application/yaml", text)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"applied":true`) {
		t.Fatalf("import: got %d %s", rec.Code, rec.Body)
	}
	told.wait(t, 1)
	again := decode[flagsascode.Document](t, s.do("GET", "/api/v1/envs/"+dev.ID.String()+"/export", full.Token, nil).ok(t))
	if len(again.Flags) != 1 || !again.Flags[0].IsEnabled || len(again.Segments) != 1 {
		t.Fatalf("Dev after the import: %+v", again)
	}

	broken := bytes.Replace(text, []byte("variationType: boolean"), []byte("variationType: colour"), 1)
	rec = s.send("POST", "/api/v1/envs/"+dev.ID.String()+"/import", full.Token, "application/yaml", broken)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"path":"flags[0].variationType"`) {
		t.Fatalf("broken file: got %d %s, want 400 naming flags[0].variationType", rec.Code, rec.Body)
	}
	s.do("POST", "/api/v1/envs/"+dev.ID.String()+"/import?reviewers=someone", full.Token, doc).fails(t, http.StatusBadRequest, "reviewers_is_invalid")
	rec = s.send("POST", "/api/v1/envs/"+dev.ID.String()+"/import?dry_run=true", full.Token, "application/yaml", text)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"path":"dry_run"`) || !strings.Contains(rec.Body.String(), "parameter_is_unknown") {
		t.Fatalf("a misspelt dryRun: got %d %s, want 400 parameter_is_unknown naming dry_run", rec.Code, rec.Body)
	}
	misspelt := bytes.Replace(text, []byte("isEnabled:"), []byte("enabled:"), 1)
	rec = s.send("POST", "/api/v1/envs/"+dev.ID.String()+"/import", full.Token, "application/yaml", misspelt)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "body_is_invalid") {
		t.Fatalf("misspelt field: got %d %s, want 400 body_is_invalid", rec.Code, rec.Body)
	}
}

// TestImportYAMLBound: a YAML import over api.MaxYAMLImportBytes is refused
// 413 unread, though JSON may be larger; one within it holding more flags
// than an import takes is refused 400 by their count, none of them decoded.
func TestImportYAMLBound(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	env := s.createProject("Web", "web").Environments[0]
	path := "/api/v1/envs/" + env.ID.String() + "/import"

	big := append([]byte("version: 1\n"), bytes.Repeat([]byte("#"), api.MaxYAMLImportBytes)...)
	if rec := s.send("POST", path, s.owner, "application/yaml", big); rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "RequestTooLarge") {
		t.Fatalf("YAML over its bound: got %d %s, want 413 RequestTooLarge", rec.Code, rec.Body)
	}
	if rec := s.send("POST", path, s.owner, "application/json", big); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "body_is_invalid") {
		t.Fatalf("the same size as JSON: got %d %s, want it read (400 body_is_invalid: it is not JSON)", rec.Code, rec.Body)
	}
	items := "version: 1\nflags: [" + strings.Repeat("{},", (api.MaxYAMLImportBytes-40)/3) + "{}]\n"
	rec := s.send("POST", path, s.owner, "application/yaml", []byte(items))
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "at most 2000 flags and segments") {
		t.Fatalf("a YAML file of empty flags: got %d %.300s, want 400 for their number", rec.Code, rec.Body)
	}
	if list := decode[core.Paged[flagstore.FlagListItem]](t, s.do("GET", "/api/v1/envs/"+env.ID.String()+"/feature-flags", s.owner, nil).ok(t)); list.TotalCount != 0 {
		t.Fatalf("the refused import wrote flags: %+v", list)
	}
}
