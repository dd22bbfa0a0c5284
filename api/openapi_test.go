package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/api"
)

// contract is api/openapi.yaml loaded for validating what the tests send and
// receive. Response objects are made strict (no undocumented members), so a
// field renamed or added in code but not in the document fails the test that
// received it.
type contract struct {
	doc    *openapi3.T
	router routers.Router

	mu        sync.Mutex
	exercised map[string]bool // operationIds answered 2xx and validated
}

var loadContract = sync.OnceValues(func() (*contract, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.OpenAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("load openapi.yaml: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("openapi.yaml is not a valid OpenAPI document: %w", err)
	}
	strictResponses(doc)
	router, err := legacy.NewRouter(doc, openapi3.DisableExamplesValidation()) // validated above
	if err != nil {
		return nil, err
	}
	return &contract{doc: doc, router: router, exercised: map[string]bool{}}, nil
})

// theContract returns the loaded document, failing the test when it does not load.
func theContract(t testing.TB) *contract {
	t.Helper()
	c, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// strictResponses forbids members a response schema does not list, in every
// object schema reachable from a response. Request schemas stay open: the API
// ignores unknown members, and the tests check that it does.
func strictResponses(doc *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	var walk func(s *openapi3.Schema, inAllOf bool)
	walk = func(s *openapi3.Schema, inAllOf bool) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		if len(s.Properties) > 0 && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil && !inAllOf {
			no := false
			s.AdditionalProperties.Has = &no
		}
		for _, p := range s.Properties {
			walk(p.Value, false)
		}
		if s.Items != nil {
			walk(s.Items.Value, false)
		}
		for _, sub := range s.OneOf {
			walk(sub.Value, false)
		}
		for _, sub := range s.AnyOf {
			walk(sub.Value, false)
		}
		for _, sub := range s.AllOf {
			walk(sub.Value, true)
		}
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, r := range op.Responses.Map() {
				for _, mt := range r.Value.Content {
					if mt.Schema != nil {
						walk(mt.Schema.Value, false)
					}
				}
			}
		}
	}
}

// codePattern matches a machine error code, as opposed to the sentence that
// may follow patch_is_invalid.
var codePattern = regexp.MustCompile(`^[A-Za-z]+(_is_[a-z]+)?$`)

// check validates one exchange the tests made through the real handler: the
// response always, against the schema documented for its status; the request
// when the answer was a success (the tests send invalid requests on purpose,
// and those must fail in the server, not here). Every error code must be
// named in the description of the documented response for its status.
//
// It returns the operationId of a validated success.
func (c *contract) check(method, target string, header http.Header, body []byte, rec *httptest.ResponseRecorder, checkRequest bool) (string, error) {
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	req.Header = header.Clone()
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		// Not a documented operation: an unknown path or method, which must
		// answer the failure envelope.
		return "", c.checkFailure(rec)
	}
	canonicalQuery(req, route.Operation)
	ctx := context.Background()
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true,
		RejectWhenRequestBodyNotSpecified: true, AuthenticationFunc: authenticate}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	what := fmt.Sprintf("%s (operation %s) answered %d", route.Path, route.Operation.OperationID, rec.Code)
	var problems []string
	// A redirect (single sign-on's authorize URL) is a success with no body.
	success := rec.Code >= 200 && rec.Code < 300 || rec.Code == http.StatusFound
	if success && checkRequest {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			problems = append(problems, "the request does not match the document: "+describe(err))
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.Code, Header: rec.Header(),
		Body: io.NopCloser(bytes.NewReader(rec.Body.Bytes())), Options: opts}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		problems = append(problems, "the response does not match the document: "+describe(err))
	} else if !success {
		problems = append(problems, undocumentedCodes(route.Operation, rec)...)
	}
	if len(problems) > 0 {
		return "", fmt.Errorf("openapi: %s %s:\n\t%s\n\tbody: %.600s", method, what, strings.Join(problems, "\n\t"), rec.Body.String())
	}
	if !success {
		return "", nil
	}
	return route.Operation.OperationID, nil
}

// validate checks an exchange of the API tests (see check) and records the
// operation as exercised; a mismatch fails the test that made the call.
func (s *server) validate(method, target string, header http.Header, body []byte, rec *httptest.ResponseRecorder) {
	s.t.Helper()
	c := theContract(s.t)
	id, err := c.check(method, target, header, body, rec, !s.hostile)
	if err != nil {
		s.t.Error(err)
		return
	}
	if id != "" {
		c.mu.Lock()
		c.exercised[id] = true
		c.mu.Unlock()
	}
}

// canonicalQuery spells the request's query parameters as the document does:
// the API matches their names case-insensitively (FeatBit's clients send
// both pageIndex and PageIndex), the validator does not.
func canonicalQuery(req *http.Request, op *openapi3.Operation) {
	q := req.URL.Query()
	out := url.Values{}
	for name, vs := range q {
		for _, p := range op.Parameters {
			if p.Value.In == openapi3.ParameterInQuery && strings.EqualFold(p.Value.Name, name) {
				name = p.Value.Name
			}
		}
		out[name] = append(out[name], vs...)
	}
	req.URL.RawQuery = out.Encode()
}

// checkFailure validates an answer against the Failure envelope.
func (c *contract) checkFailure(rec *httptest.ResponseRecorder) error {
	var v any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		return fmt.Errorf("openapi: answer is not JSON: %v", err)
	}
	if err := c.doc.Components.Schemas["Failure"].Value.VisitJSON(v); err != nil {
		return fmt.Errorf("openapi: an undocumented route answered %d, not the Failure envelope: %s", rec.Code, describe(err))
	}
	return nil
}

// undocumentedCodes lists the error codes of a failure that the description
// of the operation's response for that status does not name.
func undocumentedCodes(op *openapi3.Operation, rec *httptest.ResponseRecorder) []string {
	var env struct{ Errors []string }
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		return []string{err.Error()}
	}
	resp := op.Responses.Status(rec.Code)
	if resp == nil || resp.Value == nil || resp.Value.Description == nil {
		return []string{fmt.Sprintf("status %d is not documented", rec.Code)}
	}
	var out []string
	for _, code := range env.Errors {
		if codePattern.MatchString(code) && !strings.Contains(*resp.Value.Description, "`"+code+"`") {
			out = append(out, fmt.Sprintf("error code %s is not named in the description of its %d response (%q)",
				code, rec.Code, *resp.Value.Description))
		}
	}
	return out
}

// describe shortens a validation error to where and why, without the schema
// and value dumps kin-openapi adds.
func describe(err error) string {
	var multi openapi3.MultiError
	if errors.As(err, &multi) {
		parts := make([]string, len(multi))
		for i, e := range multi {
			parts[i] = describe(e)
		}
		return strings.Join(parts, "; ")
	}
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		return fmt.Sprintf("at /%s: %s", strings.Join(se.JSONPointer(), "/"), se.Reason)
	}
	var re *openapi3filter.RequestError
	if errors.As(err, &re) && re.Err != nil {
		where := "body"
		if re.Parameter != nil {
			where = re.Parameter.In + " parameter " + re.Parameter.Name
		}
		return where + ": " + describe(re.Err)
	}
	var rse *openapi3filter.ResponseError
	if errors.As(err, &rse) && rse.Err != nil {
		return rse.Reason + ": " + describe(rse.Err)
	}
	return err.Error()
}

// authenticate checks that the credentials sent are of the kind the
// operation's security scheme names.
func authenticate(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	h := strings.TrimSpace(in.RequestValidationInput.Request.Header.Get("Authorization"))
	token, bearer := h, false
	if len(h) > 7 && strings.EqualFold(h[:7], "Bearer ") {
		token, bearer = strings.TrimSpace(h[7:]), true
	}
	isAccessToken := strings.HasPrefix(token, "api-")
	switch in.SecuritySchemeName {
	case "session":
		if bearer && !isAccessToken {
			return nil
		}
	case "accessToken":
		if isAccessToken {
			return nil
		}
	case "refreshCookie":
		if c, err := in.RequestValidationInput.Request.Cookie("refresh-token"); err == nil && c.Value != "" {
			return nil
		}
	}
	return fmt.Errorf("Authorization %q is not a %s credential", h, in.SecuritySchemeName)
}

// TestMain runs the tests, then, when the whole package ran, fails unless
// every documented operation answered a success that was validated against
// the document.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && !testing.Short() {
		if c, err := loadContract(); err == nil {
			var missing []string
			for _, item := range c.doc.Paths.Map() {
				for _, op := range item.Operations() {
					if !c.exercised[op.OperationID] {
						missing = append(missing, op.OperationID)
					}
				}
			}
			if len(missing) > 0 {
				sort.Strings(missing)
				fmt.Fprintf(os.Stderr, "FAIL: no test validated a success of these documented operations against openapi.yaml: %s\n",
					strings.Join(missing, ", "))
				code = 1
			}
		}
	}
	os.Exit(code)
}

// TestOpenAPIDocument serves the document, to anyone, as the OpenAPI 3.1
// JSON that the YAML in the repository describes.
func TestOpenAPIDocument(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	rec := httptestGet(s, "/api/v1/openapi.json")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("got %d %q, want 200 JSON", rec.Code, rec.Header().Get("Content-Type"))
	}
	want, err := api.OpenAPIJSON()
	must(t, err)
	if !bytes.Equal(rec.Body.Bytes(), want) {
		t.Fatal("the served document is not openapi.yaml")
	}
	doc, err := openapi3.NewLoader().LoadFromData(rec.Body.Bytes())
	must(t, err)
	if !doc.IsOpenAPI31OrLater() || doc.IsOpenAPI32OrLater() {
		t.Fatalf("got openapi %q, want 3.1", doc.OpenAPI)
	}
	must(t, doc.Validate(context.Background()))
	s.validate("GET", "/api/v1/openapi.json", http.Header{}, nil, rec)

	// The examples are real answers: they must match their schema as
	// strictly as the answers the tests receive.
	c := theContract(t)
	n := 0
	for path, item := range c.doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status, r := range op.Responses.Map() {
				for _, mt := range r.Value.Content {
					if mt.Example == nil || mt.Schema == nil {
						continue
					}
					n++
					if err := mt.Schema.Value.VisitJSON(mt.Example, openapi3.EnableJSONSchema2020()); err != nil {
						t.Errorf("%s %s: the example of the %s response does not match: %s", method, path, status, describe(err))
					}
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("%d response examples, want one for each main operation", n)
	}
}

// TestOpenAPIDescribesEveryRoute fails when a route is registered but not
// documented, documented but not registered, or documented under another
// operationId than its handler's name.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	t.Parallel() // every test server has its own database
	s := newServer(t)
	c := theContract(t)
	param := regexp.MustCompile(`:(\w+)`)
	registered := map[string]string{} // "GET /api/v1/projects/{id}" → handler name
	for _, r := range s.e.Routes() {
		management := strings.HasPrefix(r.Path, "/api/v1/") || strings.HasPrefix(r.Path, "/api/v2/")
		if !management || r.Method == echo.RouteNotFound { // the management API; /api/public is the SDKs'
			continue
		}
		name := r.Name[strings.LastIndex(r.Name, ".")+1:]
		registered[r.Method+" "+param.ReplaceAllString(r.Path, "{$1}")] = strings.TrimSuffix(name, "-fm")
	}
	documented := map[string]string{}
	for path, item := range c.doc.Paths.Map() {
		for method, op := range item.Operations() {
			documented[method+" "+path] = op.OperationID
		}
	}
	for route, handler := range registered {
		id, ok := documented[route]
		switch {
		case !ok:
			t.Errorf("%s is registered in api/api.go but not documented in api/openapi.yaml (handler %s)", route, handler)
		case id != handler:
			t.Errorf("%s: operationId %q, want the handler's name %q", route, id, handler)
		}
	}
	for route := range documented {
		if _, ok := registered[route]; !ok {
			t.Errorf("%s is documented in api/openapi.yaml but not registered in api/api.go", route)
		}
	}
	if len(registered) < 90 {
		t.Errorf("found %d routes; the route table has more", len(registered))
	}
	var ids []string
	for _, id := range documented {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if dup := len(ids) - len(slices.Compact(ids)); dup > 0 {
		t.Errorf("%d operationIds are repeated", dup)
	}
}

// TestOpenAPIValidationCatchesDrift proves the harness's validation bites: a
// response with a renamed member, a missing member, an undocumented status
// or an undocumented error code fails it.
func TestOpenAPIValidationCatchesDrift(t *testing.T) {
	t.Parallel()
	c := theContract(t)
	answer := func(status int, body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		rec.Header().Set("Content-Type", "application/json")
		rec.WriteHeader(status)
		rec.WriteString(body)
		return rec
	}
	h := http.Header{"Authorization": {"Bearer session"}}
	project := `{"id":"6f1c1a52-8d34-4a9e-9a4b-2b1c3d4e5f60","name":"Web","key":"web","environments":[]}`
	cases := []struct {
		name, method, path, body string
		status                   int
		want                     string // part of the error; empty when valid
	}{
		{"valid", "GET", "/api/v1/projects", `{"success":true,"errors":[],"data":[` + project + `]}`, 200, ""},
		{"renamed member", "GET", "/api/v1/projects", `{"success":true,"errors":[],"data":[` + strings.Replace(project, `"key"`, `"projectKey"`, 1) + `]}`, 200, "projectKey"},
		{"missing member", "GET", "/api/v1/projects", `{"success":true,"errors":[],"data":[` + strings.Replace(project, `,"environments":[]`, "", 1) + `]}`, 200, "environments"},
		{"wrong type", "GET", "/api/v1/projects", `{"success":true,"errors":[],"data":{}}`, 200, "data"},
		{"undocumented status", "GET", "/api/v1/projects", `{"success":false,"errors":["Conflict"],"data":null}`, 409, "409"},
		{"undocumented code", "GET", "/api/v1/projects", `{"success":false,"errors":["name_is_required"],"data":null}`, 400, "name_is_required"},
		{"documented code", "POST", "/api/v1/projects", `{"success":false,"errors":["name_is_required"],"data":null}`, 400, ""},
		{"success false", "GET", "/api/v1/projects", `{"success":false,"errors":[],"data":[]}`, 200, "success"},
		{"errors in a success", "GET", "/api/v1/projects", `{"success":true,"errors":["x"],"data":[]}`, 200, "errors"},
		{"null array", "GET", "/api/v1/projects", `{"success":true,"errors":[],"data":null}`, 200, "data"},
		{"failure with data", "GET", "/api/v1/projects", `{"success":false,"errors":["Forbidden"],"data":[]}`, 403, "data"},
	}
	for _, tc := range cases {
		_, err := c.check(tc.method, tc.path, h, nil, answer(tc.status, tc.body), true)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: got %v, want valid", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
	// A request that does not match is caught when the answer was a success.
	_, err := c.check("POST", "/api/v1/projects", h, []byte(`{"name":42}`),
		answer(200, `{"success":true,"errors":[],"data":`+project+`}`), true)
	if err == nil || !strings.Contains(err.Error(), "request") {
		t.Errorf("got %v, want the request refused", err)
	}
}
