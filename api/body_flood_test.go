package api_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/web/httpx/httpxtest"
)

// The tests here measure the process's heap: none is parallel, so each
// runs while no other test does.

// fillBody repeats elem between open and close, separated by commas, to
// about size bytes.
func fillBody(open, elem, close string, size int) []byte {
	var b bytes.Buffer
	b.Grow(size)
	b.WriteString(open)
	for b.Len() < size-len(elem)-len(close)-1 {
		if b.Len() > len(open) {
			b.WriteByte(',')
		}
		b.WriteString(elem)
	}
	b.WriteString(close)
	return b.Bytes()
}

// request is a request with a counted body, sent by the caller with token.
func request(method, path, token, contentType string, body []byte) (*http.Request, *httpxtest.CountedBody) {
	counted := httpxtest.NewCountedBody(bytes.NewReader(body))
	req := httptest.NewRequest(method, path, counted)
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", token)
	return req, counted
}

// flood sends every request at once through the real handler and returns
// the answers, and how far the heap in use rose meanwhile above where it
// was before, sampled every millisecond.
func (s *server) flood(reqs []*http.Request) ([]*httptest.ResponseRecorder, uint64) {
	answers := make([]*httptest.ResponseRecorder, len(reqs))
	rise := httpxtest.HeapRise(func() {
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, req := range reqs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				answers[i] = httptest.NewRecorder()
				s.e.ServeHTTP(answers[i], req)
			}()
		}
		close(start)
		wg.Wait()
	})
	return answers, rise
}

// failure reads a failed answer's envelope: its error codes.
func failure(t *testing.T, rec *httptest.ResponseRecorder) []string {
	t.Helper()
	var env struct {
		Success bool
		Errors  []string
		Data    json.RawMessage
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.Success || len(env.Errors) == 0 || string(env.Data) != "null" {
		t.Fatalf("answer %d %q is not a failure in the envelope", rec.Code, rec.Body.String())
	}
	return env.Errors
}

// TestBodyFloodHoldsMemory sends 60 bodies of 1 MiB at once, each of the
// smallest values JSON has, to routes whose types make the most of them,
// as the owner, who may make every request: they are read and decoded.
// (The SDKs' insight endpoint has its flood in web/sdk.)
// Every one is refused with a 4xx (or, past the body budget, 503), the
// heap stays far below what the bodies would have cost, and the server
// answers afterwards. Before, each such body cost 40 to 100 MB decoded,
// and 60 of them exhausted a 4 GB address space.
func TestBodyFloodHoldsMemory(t *testing.T) {
	s := newServer(t)
	e := s.prodEnv()
	e.createFlag(map[string]any{"name": "Pay", "key": "pay"})
	policy := decode[iam.Policy](t, s.do("POST", "/api/v1/policies", s.owner, map[string]string{"name": "P", "key": "p"}).ok(t))
	users := "/api/v1/envs/" + e.env.ID.String() + "/end-users"
	const size = 1 << 20
	var members strings.Builder
	members.WriteByte('{')
	for i := 0; members.Len() < size-32; i++ {
		if i > 0 {
			members.WriteByte(',')
		}
		members.WriteString(`"` + strings.Repeat("m", i%7+1) + string(rune('a'+i%26)) + `x` + itoa(i) + `":0`)
	}
	members.WriteByte('}')
	shapes := []struct {
		method, path string
		body         []byte
	}{
		{"PUT", "/api/v1/policies/" + policy.ID.String() + "/statements", fillBody("[", "{}", "]", size)},
		{"PUT", "/api/v1/policies/" + policy.ID.String() + "/statements", fillBody("[", "[]", "]", size)},
		{"PUT", "/api/v1/policies/" + policy.ID.String() + "/statements", fillBody("[", strings.Repeat("[", 50)+strings.Repeat("]", 50), "]", size)},
		{"PUT", "/api/v1/policies/" + policy.ID.String() + "/settings", []byte(members.String())},
		{"PATCH", e.flags + "/pay", fillBody("[", "{}", "]", size)},
		{"POST", e.segs, fillBody(`{"name":"S","key":"s","type":"environment-specific","rules":[`, "{}", "]}", size)},
		{"POST", users + "/by-keyIds", fillBody("[", `"a"`, "]", size)},
		{"POST", users + "/upload", fillBody(`{"users":[`, "{}", "]}", size)},
		{"POST", e.flags + "/pay/schedules", fillBody(`{"title":"T","scheduledTime":"`+time.Now().Add(time.Hour).UTC().Format(time.RFC3339)+
			`","targetFlag":{"rules":[`, "{}", "]}}", size)},
	}
	const n = 60
	reqs := make([]*http.Request, n)
	for i := range reqs {
		sh := shapes[i%len(shapes)]
		reqs[i], _ = request(sh.method, sh.path, s.owner, "application/json", sh.body)
	}
	start := time.Now()
	answers, peak := s.flood(reqs)
	statuses := map[int]int{}
	for i, rec := range answers {
		statuses[rec.Code]++
		failure(t, rec)
		switch rec.Code {
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		case http.StatusServiceUnavailable:
			if rec.Header().Get("Retry-After") == "" {
				t.Errorf("503 without Retry-After")
			}
		default:
			t.Errorf("%s %s: got %d %s, want 400, 413 or 503", reqs[i].Method, reqs[i].URL.Path, rec.Code, rec.Body.String())
		}
	}
	t.Logf("%d bodies of 1 MiB at once: answered in %v (%v), the heap in use rose by at most %.0f MB",
		n, time.Since(start).Round(time.Millisecond), statuses, float64(peak)/(1<<20))
	if peak > 256<<20 {
		t.Errorf("the heap in use rose by %d MB, want under 256", peak>>20)
	}
	s.do("GET", "/api/v1/projects", s.owner, nil).ok(t) // and the server still answers
}

// TestForbiddenBodiesAreNotRead: a member without CanManageIAM sends ten
// 1 MiB statement lists at once, and a member who may not change the
// environment's end users a 32 MB file: every one is refused 403 without
// a byte of its body read. Before, each was read and decoded first (ten
// statement lists: 1.04 GB resident; the file: out of memory). A stranger
// signing in may send 4 KiB (any caller without credentials), so 16 KiB
// is refused unread.
func TestForbiddenBodiesAreNotRead(t *testing.T) {
	s := newServer(t)
	e := s.prodEnv()
	policy := decode[iam.Policy](t, s.do("POST", "/api/v1/policies", s.owner, map[string]string{"name": "P", "key": "p"}).ok(t))
	developer, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	statements := fillBody("[", "{}", "]", 1<<20)
	file, contentType := multipartUpload(t, fillBody(`{"users":[`, "{}", "]}", 32_000_000))
	var reqs []*http.Request
	var bodies []*httpxtest.CountedBody
	for range 10 {
		req, body := request("PUT", "/api/v1/policies/"+policy.ID.String()+"/statements", developer, "application/json", statements)
		reqs, bodies = append(reqs, req), append(bodies, body)
	}
	req, body := request("POST", "/api/v1/envs/"+e.env.ID.String()+"/end-users/upload", developer, contentType, file)
	reqs, bodies = append(reqs, req), append(bodies, body)
	answers, peak := s.flood(reqs)
	for i, rec := range answers {
		if codes := failure(t, rec); rec.Code != http.StatusForbidden || codes[0] != "Forbidden" {
			t.Errorf("%s: got %d %v, want 403 Forbidden", reqs[i].URL.Path, rec.Code, codes)
		}
		if read := bodies[i].Count(); read > 0 {
			t.Errorf("%s: %d bytes of the body were read before the caller was refused", reqs[i].URL.Path, read)
		}
	}
	t.Logf("ten 1 MiB statement lists and a 32 MB file from members without the right: 403 each, the heap in use rose by at most %.1f MB",
		float64(peak)/(1<<20))
	if peak > 32<<20 {
		t.Errorf("the heap in use rose by %d MB, want a few", peak>>20)
	}

	// Nor does a stranger's: signing in takes at most 4 KiB.
	req, body = request("POST", "/api/v1/identity/login-by-email", "", "application/json",
		[]byte(`{"email":"owner@example.com","password":"`+strings.Repeat("p", 16<<10)+`"}`))
	rec := httptest.NewRecorder()
	s.e.ServeHTTP(rec, req)
	if codes := failure(t, rec); rec.Code != http.StatusRequestEntityTooLarge || codes[0] != "RequestTooLarge" || body.Count() > 0 {
		t.Errorf("a sign-in over 16 KiB: got %d %v with %d bytes read, want 413 RequestTooLarge with none", rec.Code, codes, body.Count())
	}
}

// TestUploadStopsAtTheUserLimit: a 32 MB file of ten million empty users
// from a member who may import them is read until one user past the
// store's 50,000, then refused by the store's rule (users_is_invalid),
// with the heap staying small and nothing imported. Before, the whole file
// was read and decoded into ten million users first.
func TestUploadStopsAtTheUserLimit(t *testing.T) {
	s := newServer(t)
	e := s.prodEnv()
	file, contentType := multipartUpload(t, fillBody(`{"users":[`, "{}", "]}", 32_000_000))
	req, body := request("POST", "/api/v1/envs/"+e.env.ID.String()+"/end-users/upload", s.owner, contentType, file)
	answers, peak := s.flood([]*http.Request{req})
	if codes := failure(t, answers[0]); answers[0].Code != http.StatusBadRequest || codes[0] != "users_is_invalid" {
		t.Fatalf("got %d %v, want 400 users_is_invalid", answers[0].Code, codes)
	}
	read := body.Count()
	t.Logf("32 MB of empty users: refused after reading %.2f MB of it, the heap in use rose by at most %.1f MB",
		float64(read)/(1<<20), float64(peak)/(1<<20))
	if read > 1<<20 {
		t.Errorf("%d bytes read, want the reading to stop soon after 50,001 users", read)
	}
	if peak > 64<<20 {
		t.Errorf("the heap in use rose by %d MB, want under 64", peak>>20)
	}
	if n := s.count(`SELECT count(*) FROM end_users WHERE env_id = $1`, e.env.ID); n != 0 {
		t.Errorf("%d users imported from a refused file", n)
	}
}

// multipartUpload is content as the multipart file field of an upload.
func multipartUpload(t *testing.T, content []byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", "users.json")
	must(t, err)
	_, err = fw.Write(content)
	must(t, err)
	must(t, mw.Close())
	return buf.Bytes(), mw.FormDataContentType()
}
