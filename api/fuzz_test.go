package api

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/web/httpx"
)

// FuzzBind: decoding any request body never panics and either fills the
// input or answers body_is_invalid / RequestTooLarge: nothing in between.
func FuzzBind(f *testing.F) {
	for _, seed := range []string{`{"name":"x","key":"k"}`, `{`, `[]`, `null`, "\xff", `{"variations":[{"id":1}]}`,
		`{"revision":"not-a-uuid"}`, `{"name":"x"} trailing`, `{"tags":["a",null]}`,
		`{"name":"a","Name":"b"}`, `{"variations":[{"id":"1","ID":"2"}]}`, `{"unknownField":1}`, `{}`, `{"a":{"b":[{"c":1,"c":2}]}}`} {
		f.Add([]byte(seed))
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body []byte) {
		c := e.NewContext(httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)), httptest.NewRecorder())
		var in flagstore.FlagInput
		err := bind(c, &in)
		var verr *core.ValidationError
		switch {
		case err == nil, errors.Is(err, httpx.ErrTooLarge):
		case errors.As(err, &verr) && len(verr.Codes) == 1 && verr.Codes[0] == "body_is_invalid":
		default:
			t.Fatalf("bind(%q) = %v", body, err)
		}
	})
}
