package api_test

import (
	"net/http"
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
