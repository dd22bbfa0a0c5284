package web

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/web/httpx"
)

// TestFormsTakeTheirShareOfTheBodyBudget: a posted form reserves its share
// of the body budget before gorilla/csrf reads it, so while the budget is
// spent the form waits and is then answered "busy" (503), not read.
func TestFormsTakeTheirShareOfTheBodyBudget(t *testing.T) {
	budget := httpx.NewBodyBudget(1<<20, 20*time.Millisecond)
	guard := newCSRFGuard(bytes.Repeat([]byte("k"), 32), false)
	e := echo.New()
	var failed error
	e.HTTPErrorHandler = func(err error, c echo.Context) { failed = err }
	reserved, release := make(chan struct{}), make(chan struct{})
	e.POST("/hold", func(c echo.Context) error {
		if _, err := httpx.Reserve(c, 1<<20); err != nil {
			return err
		}
		close(reserved)
		<-release
		return c.NoContent(http.StatusOK)
	}, budget.Hold)
	formRead := false
	e.POST("/form", func(c echo.Context) error { formRead = true; return nil }, budget.Hold, guard.protect(1<<20))

	held := make(chan struct{})
	go func() {
		e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/hold", nil))
		close(held)
	}()
	<-reserved
	req := httptest.NewRequest(http.MethodPost, "/form", strings.NewReader("name=a&_csrf=b"))
	req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
	e.ServeHTTP(httptest.NewRecorder(), req)
	close(release)
	<-held
	if !errors.Is(failed, httpx.ErrBusy) || formRead {
		t.Fatalf("a form posted while the budget is spent: %v (read: %v), want ErrBusy", failed, formRead)
	}
	if e := explain(failed); e.status != http.StatusServiceUnavailable {
		t.Errorf("the page answers %d %q, want 503", e.status, e.heading)
	}
}
