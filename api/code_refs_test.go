package api_test

import (
	"net/http"
	"testing"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// TestCodeRefsNeedDescribingEveryFlag: uploading code references needs
// UpdateFlagDescription on every flag of the environment, checked before
// the body is read (a malformed body is refused alike); a member who may
// only read the flags reads the references the owner uploaded, and the
// upload is in the environment's audit log.
func TestCodeRefsNeedDescribingEveryFlag(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	upload := "/api/v1/envs/" + e.env.ID.String() + "/code-references"
	body := map[string]any{"repository": "shop", "branch": "main", "commit": "abc123",
		"references": []map[string]any{{"flagKey": "pay", "path": "src/pay.go", "line": 7, "snippet": `flags.Bool("pay")`}}}

	reader, _ := s.addMember("reader@example.com", s.policyFor("reader", []access.Statement{
		{ID: "p", ResourceType: access.TypeProject, Effect: "allow", Actions: []string{string(access.CanAccessProject)}, Resources: []string{"project/*"}},
		{ID: "e", ResourceType: access.TypeEnv, Effect: "allow", Actions: []string{string(access.CanAccessEnv)}, Resources: []string{"project/*:env/*"}},
		{ID: "f", ResourceType: access.TypeFlag, Effect: "allow", Actions: []string{string(access.ToggleFlag)}, Resources: []string{"project/*:env/*:flag/*"}},
	}))
	s.do("PUT", upload, reader, body).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", upload, reader, `{"repository":`).fails(t, http.StatusForbidden, "Forbidden")

	got := decode[flagstore.CodeRefsResult](t, s.do("PUT", upload, s.owner, body).ok(t))
	if got.References != 1 || got.Flags != 1 || got.Commit != "abc123" {
		t.Fatalf("upload answered %+v, want 1 reference to 1 flag at abc123", got)
	}
	refs := decode[[]flagstore.FlagCodeRef](t, s.do("GET", e.flags+"/pay/code-references", reader, nil).ok(t))
	if len(refs) != 1 || refs[0].Path != "src/pay.go" || refs[0].Line != 7 || refs[0].Repository != "shop" {
		t.Fatalf("the reader reads %+v", refs)
	}
	if n := s.audits("CodeReferences"); n != 1 {
		t.Fatalf("audit entries of uploads: got %d, want 1", n)
	}
	s.do("PUT", upload, s.owner, map[string]any{"repository": "shop", "branch": "main", "commit": "abc123"}).
		fails(t, http.StatusBadRequest, "references_is_required")
}
