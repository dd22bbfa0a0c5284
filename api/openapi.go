package api

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"
	"go.yaml.in/yaml/v3"
)

// OpenAPIYAML is the API's OpenAPI 3.1 document, written by hand beside the
// route table it describes. The API tests hold every route and every
// exercised request and response to it.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte

// OpenAPIJSON converts OpenAPIYAML to JSON, the form clients and renderers
// fetch. It fails only on a document that is not YAML of string-keyed maps.
func OpenAPIJSON() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(OpenAPIYAML, &doc); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	return json.Marshal(doc)
}

// openAPIJSON is OpenAPIJSON, converted once: the document is embedded and
// never changes while the process runs.
var openAPIJSON = sync.OnceValues(OpenAPIJSON)

// openAPI answers the document as it is, without the envelope: generators
// and renderers expect a bare OpenAPI document.
func (h *Handler) openAPI(c echo.Context) error {
	doc, err := openAPIJSON()
	if err != nil {
		return err // a broken build; the tests fail first
	}
	return c.JSONBlob(http.StatusOK, doc)
}
