package api

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/web/httpx"
)

// TestBodyBudget: a request holds what it reserved until it is answered; a
// request that finds the budget spent waits, and past its wait is answered
// 503 ServiceUnavailable with Retry-After; once the budget is returned the
// next request gets it.
func TestBodyBudget(t *testing.T) {
	budget := httpx.NewBodyBudget(100, 50*time.Millisecond)
	e := echo.New()
	e.HTTPErrorHandler = func(err error, c echo.Context) { WriteError(c, slog.New(slog.DiscardHandler), err) }
	reserved, release := make(chan struct{}), make(chan struct{})
	e.POST("/hold", func(c echo.Context) error {
		if _, err := httpx.Reserve(c, 80); err != nil {
			return err
		}
		close(reserved)
		<-release
		return c.NoContent(http.StatusOK)
	}, budget.Hold)
	e.POST("/body", func(c echo.Context) error {
		var v []string
		if err := bind(c, &v); err != nil {
			return err
		}
		return c.NoContent(http.StatusOK)
	}, budget.Hold)
	post := func(path, body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
		return rec
	}

	held := make(chan *httptest.ResponseRecorder)
	go func() { held <- post("/hold", "") }()
	<-reserved
	// 20 bytes are left, and a body reserves more than its size: it waits, then is refused.
	rec := post("/body", `["a"]`)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" ||
		!bytes.Contains(rec.Body.Bytes(), []byte(`"errors":["ServiceUnavailable"]`)) {
		t.Fatalf("with the budget spent: got %d %v %s, want 503 ServiceUnavailable with Retry-After: 1", rec.Code, rec.Header(), rec.Body)
	}
	close(release)
	if rec := <-held; rec.Code != http.StatusOK {
		t.Fatalf("the holding request: got %d", rec.Code)
	}
	// Answered, it returned its share: the whole budget is there again.
	for range 3 {
		if rec := post("/body", `["a"]`); rec.Code != http.StatusOK {
			t.Fatalf("with the budget returned: got %d %s, want 200", rec.Code, rec.Body)
		}
	}
}
