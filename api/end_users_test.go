package api_test

import (
	"bytes"
	"context"
	"log/slog"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/runner"
	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
)

func strp(s string) *string { return &s }

// seeEndUsers hands users to an end-user buffer over st as the SDK
// endpoints do and writes them.
func seeEndUsers(t *testing.T, st *store.Store, envID uuid.UUID, at time.Time, users ...eval.EndUser) {
	t.Helper()
	endUsers := runner.NewEndUsers(st, slog.New(slog.DiscardHandler))
	endUsers.Saw(envID, users, at)
	must(t, endUsers.Flush(context.Background()))
}

type cursorPage struct {
	Items          []sdkdata.EndUser   `json:"items"`
	PreviousCursor *sdkdata.PageCursor `json:"previousCursor"`
	NextCursor     *sdkdata.PageCursor `json:"nextCursor"`
}

func keysOf(users []sdkdata.EndUser) []string {
	var out []string
	for _, u := range users {
		out = append(out, u.KeyID)
	}
	return out
}

func TestEndUserRoutes(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	base := "/api/v1/envs/" + e.env.ID.String()
	f := e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	sg := decode[flagstore.Segment](t, s.do("POST", e.segs, s.owner, map[string]any{"name": "Testers", "key": "testers", "type": "environment-specific"}).ok(t))
	s.do("PUT", e.segs+"/"+sg.ID.String()+"/targeting", s.owner, map[string]any{"included": []string{"bob"}}).ok(t)
	s.do("PUT", e.flags+"/pay/targeting", s.owner, put(targetingOf(f, sg.ID))).ok(t)
	s.do("PUT", e.flags+"/pay/toggle/true", s.owner, nil).ok(t)

	t0 := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	seeEndUsers(t, s.st, e.env.ID, t0,
		eval.EndUser{KeyID: "alice", Name: strp("Alice")},
		eval.EndUser{KeyID: "bob", Name: strp("Bob"), CustomizedProperties: []eval.UserProperty{{Name: "country", Value: "NL"}}},
		eval.EndUser{KeyID: "carol", CustomizedProperties: []eval.UserProperty{{Name: "plan", Value: "pro"}}})
	// bob again, later and from another SDK: one row, last seen moves, first seen stays.
	seeEndUsers(t, s.st, e.env.ID, t0.Add(time.Minute), eval.EndUser{KeyID: "bob", CustomizedProperties: []eval.UserProperty{{Name: "country", Value: "BE"}}})

	// list: most recently seen first, two a page, keyset cursors both ways.
	first := decode[cursorPage](t, s.do("POST", base+"/end-users/list", s.owner, map[string]any{"searchText": "", "pageSize": 2}).ok(t))
	if got := keysOf(first.Items); len(got) != 2 || got[0] != "bob" || first.PreviousCursor != nil || first.NextCursor == nil {
		t.Fatalf("first page %v prev %v next %v", got, first.PreviousCursor, first.NextCursor)
	}
	bob := first.Items[0]
	if *bob.Name != "Bob" || bob.CustomizedProperties[0].Value != "BE" || !bob.CreatedAt.Equal(t0) || !bob.UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("bob kept as %+v", bob)
	}
	second := decode[cursorPage](t, s.do("POST", base+"/end-users/list", s.owner, map[string]any{"pageSize": 2, "cursor": first.NextCursor}).ok(t))
	if len(second.Items) != 1 || second.NextCursor != nil || second.PreviousCursor == nil || second.PreviousCursor.Direction != "backward" {
		t.Fatalf("second page %v prev %v next %v", keysOf(second.Items), second.PreviousCursor, second.NextCursor)
	}
	back := decode[cursorPage](t, s.do("POST", base+"/end-users/list", s.owner, map[string]any{"pageSize": 2, "cursor": second.PreviousCursor}).ok(t))
	if got := keysOf(back.Items); len(got) != 2 || got[0] != first.Items[0].KeyID || got[1] != first.Items[1].KeyID || back.PreviousCursor != nil {
		t.Fatalf("back to the first page: %v prev %v", got, back.PreviousCursor)
	}
	s.do("POST", base+"/end-users/list", s.owner, map[string]any{"pageSize": 1000}).fails(t, http.StatusBadRequest, "pageSize_is_invalid")
	s.do("POST", base+"/end-users/list", s.owner, map[string]any{"cursor": map[string]any{"id": bob.ID, "updatedAt": bob.UpdatedAt, "direction": "sideways"}}).
		fails(t, http.StatusBadRequest, "cursor_is_invalid")

	// search by any part of the key or name (FeatBit's Contains), with exclusions.
	if got := keysOf(decode[[]sdkdata.EndUser](t, s.do("POST", base+"/end-users/search", s.owner, map[string]any{"searchText": "LIC"}).ok(t))); len(got) != 1 || got[0] != "alice" {
		t.Fatalf("search LIC found %v", got)
	}
	found := decode[[]sdkdata.EndUser](t, s.do("POST", base+"/end-users/search", s.owner, map[string]any{"searchText": "AL", "excludedKeyIds": []string{}, "globalUserOnly": false, "limit": 10}).ok(t))
	if got := keysOf(found); len(got) != 1 || got[0] != "alice" {
		t.Fatalf("search AL found %v", got)
	}
	found = decode[[]sdkdata.EndUser](t, s.do("POST", base+"/end-users/search", s.owner, map[string]any{"searchText": "", "excludedKeyIds": []string{"bob"}, "limit": 10}).ok(t))
	if got := keysOf(found); len(got) != 2 {
		t.Fatalf("search excluding bob found %v", got)
	}
	if found := decode[[]sdkdata.EndUser](t, s.do("POST", base+"/end-users/search", s.owner, map[string]any{"searchText": "%"}).ok(t)); len(found) != 0 {
		t.Fatalf("%% is no wildcard: found %v", keysOf(found))
	}

	// by keys; one user; unknown ids.
	byKeys := decode[[]sdkdata.EndUser](t, s.do("POST", base+"/end-users/by-keyIds", s.owner, []string{"carol", "nobody"}).ok(t))
	if got := keysOf(byKeys); len(got) != 1 || got[0] != "carol" {
		t.Fatalf("by-keyIds found %v", got)
	}
	got := decode[sdkdata.EndUser](t, s.do("GET", base+"/end-users/"+bob.ID.String(), s.owner, nil).ok(t))
	if got.KeyID != "bob" || got.EnvID != e.env.ID {
		t.Fatalf("got %+v", got)
	}
	s.do("GET", base+"/end-users/"+uuid.NewString(), s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")

	// flags: what each serves now and why.
	type flagVm struct {
		Key            string   `json:"key"`
		MatchVariation *string  `json:"matchVariation"`
		MatchReason    string   `json:"matchReason"`
		ServedBy       string   `json:"servedBy"`
		Why            []string `json:"why"`
	}
	flagsOf := func(u sdkdata.EndUser) flagVm {
		t.Helper()
		page := decode[struct {
			TotalCount int64    `json:"totalCount"`
			Items      []flagVm `json:"items"`
		}](t, s.do("GET", base+"/end-users/"+u.ID.String()+"/flags?pageIndex=0&pageSize=10", s.owner, nil).ok(t))
		if page.TotalCount != 1 || len(page.Items) != 1 || page.Items[0].Key != "pay" {
			t.Fatalf("flags of %s: %+v", u.KeyID, page)
		}
		return page.Items[0]
	}
	alice := byKey(t, s, base, "alice")
	if fv := flagsOf(alice); fv.ServedBy != "targeted" || *fv.MatchVariation != f.Variations[0].Value || len(fv.Why) == 0 {
		t.Fatalf("alice: %+v", fv)
	}
	carol := byKey(t, s, base, "carol")
	if fv := flagsOf(carol); fv.ServedBy != "default" || *fv.MatchVariation != f.Variations[1].Value {
		t.Fatalf("carol: %+v", fv)
	}
	if fv := flagsOf(bob); fv.ServedBy != "Benelux" || fv.MatchReason != "Benelux" {
		t.Fatalf("bob (BE, in Testers): %+v", fv)
	}
	s.do("GET", base+"/end-users/"+bob.ID.String()+"/flags?pageSize=0", s.owner, nil).fails(t, http.StatusBadRequest, "pageSize_is_invalid")

	// segments the user is in.
	type segVm struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	if segs := decode[[]segVm](t, s.do("GET", base+"/end-users/"+bob.ID.String()+"/segments", s.owner, nil).ok(t)); len(segs) != 1 || segs[0].Name != "Testers" {
		t.Fatalf("bob's segments %+v", segs)
	}
	if segs := decode[[]segVm](t, s.do("GET", base+"/end-users/"+alice.ID.String()+"/segments", s.owner, nil).ok(t)); len(segs) != 0 {
		t.Fatalf("alice's segments %+v", segs)
	}

	// get-by-featureflag: users seen in the range with what the flag serves them.
	from, to := strconv.FormatInt(t0.Add(-time.Minute).UnixMilli(), 10), strconv.FormatInt(time.Now().UnixMilli(), 10)
	byFlag := decode[core.Paged[sdkdata.FlagEndUser]](t, s.do("GET", base+"/end-users/get-by-featureflag?featureFlagKey=pay&from="+from+"&to="+to+
		"&variationId="+f.Variations[0].ID+"&pageIndex=0&pageSize=10", s.owner, nil).ok(t))
	served := map[string]bool{}
	for _, it := range byFlag.Items {
		served[it.KeyID] = true
	}
	if byFlag.TotalCount != 3 || !served["alice"] || served["carol"] {
		t.Fatalf("get-by-featureflag: %+v", byFlag)
	}
	s.do("GET", base+"/end-users/get-by-featureflag?from=1&to=2", s.owner, nil).fails(t, http.StatusBadRequest, "featureFlagKey_is_required")
	s.do("GET", base+"/end-users/get-by-featureflag?featureFlagKey=nope&from=1&to=2", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")

	// upsert replaces the name and properties; FeatBit requires both key and name.
	up := decode[sdkdata.EndUser](t, s.do("PUT", base+"/end-users", s.owner, map[string]any{"keyId": "carol", "name": "Carol",
		"customizedProperties": []map[string]string{{"name": "plan", "value": "free"}}}).ok(t))
	if up.ID != carol.ID || *up.Name != "Carol" || up.CustomizedProperties[0].Value != "free" || !up.CreatedAt.Equal(carol.CreatedAt) {
		t.Fatalf("upserted %+v", up)
	}
	s.do("PUT", base+"/end-users", s.owner, map[string]any{"keyId": "dave"}).fails(t, http.StatusBadRequest, "name_is_required")
	s.do("PUT", base+"/end-users", s.owner, map[string]any{"keyId": "dave", "name": "Dave",
		"customizedProperties": []map[string]string{{"name": "", "value": "x"}}}).fails(t, http.StatusBadRequest, "customizedProperties_is_invalid")
	if n := s.count(`SELECT count(*) FROM end_users WHERE key_id = 'dave'`); n != 0 {
		t.Fatalf("a refused upsert kept %d rows", n)
	}
	if n := s.count(`SELECT count(*) FROM audit_logs WHERE ref_type = 'EndUser'`); n != 1 {
		t.Fatalf("%d audit entries for one upsert", n)
	}

	// properties: the built-in ones, then those SDKs reported; add, rename, remove.
	props := decode[[]sdkdata.EndUserProperty](t, s.do("GET", base+"/end-user-properties", s.owner, nil).ok(t))
	var names []string
	for _, p := range props {
		names = append(names, p.Name)
	}
	if len(names) != 4 || names[0] != "keyId" || names[1] != "name" || names[2] != "country" || names[3] != "plan" || !props[0].IsBuiltIn {
		t.Fatalf("properties %v", names)
	}
	id := uuid.NewString()
	p := decode[sdkdata.EndUserProperty](t, s.do("PUT", base+"/end-user-properties/"+id+"/upsert", s.owner, map[string]any{
		"name": "tier", "presetValues": []map[string]string{{"id": "1", "value": "gold", "description": "best"}}, "usePresetValuesOnly": true,
		"isDigestField": false, "remark": "billing tier"}).ok(t))
	if p.ID.String() != id || p.Name != "tier" || len(p.PresetValues) != 1 || !p.UsePresetValuesOnly {
		t.Fatalf("property %+v", p)
	}
	s.do("PUT", base+"/end-user-properties/"+id+"/upsert", s.owner, map[string]any{"name": "country"}).fails(t, http.StatusUnprocessableEntity, "NameHasBeenUsed")
	s.do("PUT", base+"/end-user-properties/"+id+"/upsert", s.owner, map[string]any{"name": ""}).fails(t, http.StatusBadRequest, "name_is_required")
	s.do("PUT", base+"/end-user-properties/"+props[0].ID.String()+"/upsert", s.owner, map[string]any{"name": "other"}).fails(t, http.StatusBadRequest, "property_is_builtIn")
	s.do("DELETE", base+"/end-user-properties/"+props[0].ID.String(), s.owner, nil).fails(t, http.StatusBadRequest, "property_is_builtIn")
	if ok := decode[bool](t, s.do("DELETE", base+"/end-user-properties/"+id, s.owner, nil).ok(t)); !ok {
		t.Fatal("delete answered false")
	}
	s.do("DELETE", base+"/end-user-properties/"+id, s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
}

func byKey(t *testing.T, s *server, base, key string) sdkdata.EndUser {
	t.Helper()
	users := decode[[]sdkdata.EndUser](t, s.do("POST", base+"/end-users/by-keyIds", s.owner, []string{key}).ok(t))
	if len(users) != 1 {
		t.Fatalf("no end user %s", key)
	}
	return users[0]
}

// TestEndUsersBoundPerEnvironment: past the bound, new keys are dropped and
// known ones still update when they were last seen; the status says so, and
// an upsert of a new key is refused.
func TestEndUsersBoundPerEnvironment(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	bounded := store.New(s.pool, s.st.Projects().Keys(), slog.New(slog.DiscardHandler), core.Options{MaxEndUsersPerEnv: 3})
	t0 := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var users []eval.EndUser
	for i := range 5 {
		users = append(users, eval.EndUser{KeyID: "u" + strconv.Itoa(i)})
	}
	seeEndUsers(t, bounded, e.env.ID, t0, users...)
	if n := s.count(`SELECT count(*) FROM end_users WHERE env_id = $1`, e.env.ID); n != 3 {
		t.Fatalf("kept %d end users, want the bound 3", n)
	}
	seeEndUsers(t, bounded, e.env.ID, t0.Add(time.Minute), users...)
	if n := s.count(`SELECT count(*) FROM end_users WHERE env_id = $1 AND updated_at = $2`, e.env.ID, t0.Add(time.Minute)); n != 3 {
		t.Fatalf("%d known users updated, want 3", n)
	}
	if n := s.count(`SELECT count(*) FROM end_users WHERE env_id = $1`, e.env.ID); n != 3 {
		t.Fatalf("kept %d end users after the bound", n)
	}
	a, err := bounded.IAM().Authenticate(context.Background(), iam.Credentials{Authorization: s.owner})
	must(t, err)
	st, err := bounded.SDK().EndUserStatus(context.Background(), a, e.env.ID)
	must(t, err)
	if !st.LimitReached || st.Count != 3 || st.Max != 3 {
		t.Fatalf("status %+v", st)
	}
	if _, err := bounded.SDK().UpsertEndUser(context.Background(), a, e.env.ID, sdkdata.UpsertEndUser{KeyID: "new", Name: "New"}); err == nil {
		t.Fatal("a new key past the bound was upserted")
	}
	// Another environment has its own bound.
	dev := s.createProject("App", "app").Environments[0]
	seeEndUsers(t, bounded, dev.ID, t0, users[:2]...)
	if n := s.count(`SELECT count(*) FROM end_users WHERE env_id = $1`, dev.ID); n != 2 {
		t.Fatalf("the other environment kept %d", n)
	}
}

// multipartFile is a multipart body with one field "file", and its content type.
func multipartFile(t *testing.T, content string) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", "users.json")
	must(t, err)
	_, err = fw.Write([]byte(content))
	must(t, err)
	must(t, mw.Close())
	return buf.Bytes(), mw.FormDataContentType()
}

// TestEndUserUploadAndDownload: FeatBit's file goes in whole or not at all,
// and comes out again.
func TestEndUserUploadAndDownload(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	e := s.prodEnv()
	base := "/api/v1/envs/" + e.env.ID.String() + "/end-users"
	upload := func(content string) *reply {
		body, ct := multipartFile(t, content)
		return s.do("POST", base+"/upload", s.owner, body, "Content-Type", ct)
	}
	file := `{"users":[{"keyId":"u1","name":"One","customizedProperties":[{"name":"plan","value":"pro"}]},{"keyId":"u2","name":null,"customizedProperties":[]}],
		"userProperties":["plan","region"]}`
	if ok := decode[bool](t, upload(file).ok(t)); !ok {
		t.Fatal("upload answered false")
	}
	if n := s.count(`SELECT count(*) FROM end_users WHERE env_id = $1`, e.env.ID); n != 2 {
		t.Fatalf("%d users imported, want 2", n)
	}
	upload(`{"users":[{"keyId":"u3"},{"keyId":""}]}`).fails(t, http.StatusBadRequest, "users_is_invalid")
	upload(`{"users":[{"keyId":"u3"},{"keyId":"u3"}]}`).fails(t, http.StatusBadRequest, "users_is_invalid")
	upload(`not json`).fails(t, http.StatusBadRequest, "file_is_invalid")
	if n := s.count(`SELECT count(*) FROM end_users WHERE env_id = $1`, e.env.ID); n != 2 {
		t.Fatalf("a refused file changed the users: %d", n)
	}
	decode[bool](t, upload(``).ok(t)) // an empty file changes nothing, as in FeatBit
	// Scripts may send the file as the JSON body.
	decode[bool](t, s.do("POST", base+"/upload", s.owner, map[string]any{"users": []map[string]any{{"keyId": "u9", "name": "Nine"}}}).ok(t))
	if n := s.count(`SELECT count(*) FROM end_users WHERE env_id = $1`, e.env.ID); n != 3 {
		t.Fatalf("%d users after a JSON upload, want 3", n)
	}
	// Importing changes the environment: someone without UpdateEnvSettings is refused.
	nobody, _ := s.addMember("nobody@example.com")
	body, ct := multipartFile(t, file)
	s.do("POST", base+"/upload", nobody, body, "Content-Type", ct).fails(t, http.StatusForbidden, "Forbidden")

	got := decode[sdkdata.ImportUserData](t, s.do("POST", base+"/download", s.owner, map[string]any{"searchText": "", "pageSize": 10}).ok(t))
	if len(got.Users) != 3 || strings.Join(got.UserProperties, ",") != "keyId,name,plan,region" {
		t.Fatalf("download %+v", got)
	}
	for _, u := range got.Users {
		if u.KeyID == "u1" && (*u.Name != "One" || u.CustomizedProperties[0].Value != "pro") {
			t.Fatalf("u1 downloaded as %+v", u)
		}
	}
	got = decode[sdkdata.ImportUserData](t, s.do("POST", base+"/download", s.owner, map[string]any{"searchText": "nobody"}).ok(t))
	if len(got.Users) != 0 || got.Users == nil {
		t.Fatalf("download of nobody %+v", got)
	}
}
