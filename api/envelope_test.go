package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

func TestEnvelopeForEveryFailure(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	s.e.GET("/api/v1/test-panic", func(echo.Context) error { panic("secret internal detail") })

	s.do("GET", "/api/v1/no-such-route", s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("GET", "/api/nothing-here", "", nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	s.do("PATCH", "/api/v1/projects", s.owner, nil).fails(t, http.StatusMethodNotAllowed, "MethodNotAllowed")
	s.do("POST", "/api/v1/projects", s.owner, `{"name":`).fails(t, http.StatusBadRequest, "body_is_invalid")
	s.do("POST", "/api/v1/projects", s.owner, `{"name": 42, "key": "k"}`).fails(t, http.StatusBadRequest, "body_is_invalid")
	s.do("POST", "/api/v1/projects", s.owner, `{"name":"a","key":"b"} trailing`).fails(t, http.StatusBadRequest, "body_is_invalid")
	s.do("POST", "/api/v1/projects", s.owner, `[1,2]`).fails(t, http.StatusBadRequest, "body_is_invalid")
	big := `{"name":"` + strings.Repeat("x", 1<<20) + `","key":"big"}`
	s.do("POST", "/api/v1/projects", s.owner, big).fails(t, http.StatusRequestEntityTooLarge, "RequestTooLarge")

	r := s.do("GET", "/api/v1/test-panic", s.owner, nil)
	r.fails(t, http.StatusInternalServerError, "InternalServerError")
	if strings.Contains(r.raw, "secret internal detail") {
		t.Fatalf("500 leaked the panic message: %s", r.raw)
	}
	if n := s.count(`SELECT count(*) FROM projects`); n != 0 {
		t.Fatalf("rejected requests stored %d projects", n)
	}
}

func TestUnknownFieldsAreIgnored(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	s.do("POST", "/api/v1/projects", s.owner, `{"name":"Web","key":"web","color":"blue"}`).ok(t)
}

// TestAnswersGoOutWhole: an answer larger than net/http's 2 KiB buffer goes
// out with its Content-Length, not in chunks, and reads back whole.
func TestAnswersGoOutWhole(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	env := s.createProject("Web", "web").Environments[0]
	for i := range 12 {
		s.do("POST", "/api/v1/envs/"+env.ID.String()+"/feature-flags", s.owner, map[string]any{"name": fmt.Sprintf("Flag %d", i), "key": fmt.Sprintf("flag-%d", i)}).ok(t)
	}
	srv := httptest.NewServer(s.e)
	t.Cleanup(srv.Close)
	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/envs/"+env.ID.String()+"/feature-flags?pageSize=20", nil)
	req.Header.Set("Authorization", s.owner)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Data struct{ Items []json.RawMessage } `json:"data"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || len(answer.Data.Items) != 12 {
		t.Fatalf("the list read %d items (%v) from %.200s", len(answer.Data.Items), err, body)
	}
	if len(body) <= 2048 || resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) != 0 {
		t.Fatalf("a %d-byte answer came with Content-Length %d and transfer encoding %v, want its length and no chunks",
			len(body), resp.ContentLength, resp.TransferEncoding)
	}
}
