package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bunting-flags/bunting/cmd/internal/server"
)

// The owner account of the fresh install the walk signs in to, and the
// second member who approves change requests; the replay test signs in
// with the same.
const (
	ownerEmail     = "owner@featbit-ui.test"
	ownerPassword  = "featbit-ui-owner"
	reviewerEmail  = "reviewer@featbit-ui.test"
	reviewerPasswd = "featbit-ui-reviewer"
)

// freeAddr returns a loopback address nothing listens on.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startBunting serves Bunting as `bunting serve` does, over dbURL, at addr,
// letting uiOrigin call its API; it returns once Bunting answers.
func startBunting(ctx context.Context, dbURL, addr, uiOrigin string, log *slog.Logger) (<-chan error, error) {
	env := map[string]string{
		"BUNTING_ADDR":           addr,
		"BUNTING_DATABASE_URL":   dbURL,
		"BUNTING_ADMIN_EMAIL":    ownerEmail,
		"BUNTING_ADMIN_PASSWORD": ownerPassword,
		"BUNTING_CORS_ORIGINS":   uiOrigin,
		"BUNTING_PASSWORD_COST":  "4",
		"BUNTING_BASE_URL":       "http://" + addr,
		"BUNTING_LOG_LEVEL":      "warn",
	}
	cfg, err := server.LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- server.Serve(ctx, cfg, log) }()
	// Ready when liveness answers; a failed start answers on done.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case err := <-done:
			return nil, fmt.Errorf("bunting: %w", err)
		case <-deadline:
			return nil, fmt.Errorf("bunting did not answer at %s within a minute", addr)
		case <-tick.C:
			if res, err := http.Get("http://" + addr + "/health/readiness"); err == nil {
				res.Body.Close()
				if res.StatusCode == http.StatusOK {
					return done, nil
				}
			}
		}
	}
}

// exchange is one request the UI sent to Bunting and its answer.
type exchange struct {
	Seq      int             `json:"seq"`
	Step     string          `json:"step"`
	Method   string          `json:"method"`
	Path     string          `json:"path"`  // without the query
	Query    string          `json:"query"` // raw, may be ""
	Body     json.RawMessage `json:"body,omitempty"`
	Status   int             `json:"status"`
	Answer   json.RawMessage `json:"answer,omitempty"`
	Route    string          `json:"route"`   // the OpenAPI path it matches, "" for none
	Claimed  bool            `json:"claimed"` // the route and method are in Bunting's OpenAPI document
	Auth     string          `json:"-"`       // the Authorization header, to tell the two members apart
	Org, WS  string          `json:"-"`       // the Organization and Workspace headers the UI sent
	Received time.Time       `json:"-"`
}

// recorder keeps every exchange, tagged with the step under way, and lets a
// step wait for the answer to a request it expects.
type recorder struct {
	routes *routeTable

	mu        sync.Mutex
	step      string
	exchanges []*exchange
	changed   chan struct{} // closed and replaced at each new exchange
}

func newRecorder(routes *routeTable) *recorder {
	return &recorder{routes: routes, changed: make(chan struct{})}
}

func (r *recorder) setStep(name string) {
	r.mu.Lock()
	r.step = name
	r.mu.Unlock()
}

func (r *recorder) add(e *exchange) {
	r.mu.Lock()
	e.Seq = len(r.exchanges) + 1
	e.Step = r.step
	r.exchanges = append(r.exchanges, e)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// since returns the exchanges from index from on, and a channel closed at the next.
func (r *recorder) since(from int) ([]*exchange, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if from > len(r.exchanges) {
		from = len(r.exchanges)
	}
	return append([]*exchange(nil), r.exchanges[from:]...), r.changed
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.exchanges)
}

func (r *recorder) all() []*exchange {
	all, _ := r.since(0)
	return all
}

// recordingProxy forwards the UI's API calls to Bunting and records each
// with its answer. The UI's API URL is the proxy: the browser's own network
// log does not keep request bodies reliably, the proxy sees every byte.
func recordingProxy(bunting string, rec *recorder) http.Handler {
	target, _ := url.Parse("http://" + bunting)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(res *http.Response) error {
		req := res.Request
		if req.Method == http.MethodOptions {
			return nil // CORS preflights are the browser's, not the UI's
		}
		answer, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return err
		}
		res.Body = io.NopCloser(bytes.NewReader(answer))
		e := &exchange{Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery,
			Status: res.StatusCode, Auth: req.Header.Get("Authorization"), Received: time.Now(),
			Org: req.Header.Get("Organization"), WS: req.Header.Get("Workspace")}
		if b, ok := req.Context().Value(bodyKey{}).([]byte); ok && len(b) > 0 {
			e.Body = jsonOrString(b)
		}
		if strings.Contains(res.Header.Get("Content-Type"), "json") && len(answer) > 0 {
			e.Answer = jsonOrString(answer)
		}
		e.Route, e.Claimed = rec.routes.match(e.Method, e.Path)
		rec.add(e)
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Body != nil {
			b, err := io.ReadAll(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			req.Body = io.NopCloser(bytes.NewReader(b))
			req = req.WithContext(context.WithValue(req.Context(), bodyKey{}, b))
		}
		proxy.ServeHTTP(w, req)
	})
}

type bodyKey struct{}

// jsonOrString keeps b as JSON when it is, and as a JSON string otherwise.
func jsonOrString(b []byte) json.RawMessage {
	if json.Valid(b) {
		return json.RawMessage(b)
	}
	s, _ := json.Marshal(string(b))
	return s
}

// staticUI serves the built UI from dir with env.js written for apiURL, and
// index.html for every path that is not a file, as FeatBit's nginx does for
// the Angular routes.
func staticUI(dir, apiURL string) (http.Handler, error) {
	tmpl, err := os.ReadFile(filepath.Join(dir, "assets", "env.template.js"))
	if err != nil {
		return nil, fmt.Errorf("the build has no assets/env.template.js: %w", err)
	}
	envJS := []byte(envsubst(string(tmpl), map[string]string{
		"API_URL":        apiURL,
		"EVALUATION_URL": apiURL,
		"HOSTING_MODE":   "self-hosted",
		"VERSION":        "bunting-walk",
	}))
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		return nil, err
	}
	files := http.FileServer(http.Dir(dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := path.Clean(r.URL.Path)
		switch {
		case p == "/assets/env.js":
			w.Header().Set("Content-Type", "text/javascript")
			w.Write(envJS)
			return
		case p != "/" && p != "/index.html":
			if st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err == nil && !st.IsDir() {
				files.ServeHTTP(w, r)
				return
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(index)
	}), nil
}

// envsubst replaces ${NAME} as FeatBit's docker-entrypoint.sh does with
// envsubst: a variable not given becomes "".
func envsubst(s string, vars map[string]string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.Index(s[i:], "}")
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(vars[s[i+2:i+j]])
		s = s[i+j+1:]
	}
}

// serveOn serves h at addr until ctx ends.
func serveOn(ctx context.Context, addr string, h http.Handler) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	go func() { <-ctx.Done(); srv.Close() }()
	return nil
}
