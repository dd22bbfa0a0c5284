package outbound

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/reach"
)

// TestClient: the dial-time check, the answer bound (exactly the limit
// passes, one byte more fails) and redirects.
func TestClient(t *testing.T) {
	size := MaxAnswerBytes
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, "http://localhost"+strings.TrimPrefix(r.Host, "127.0.0.1")+"/", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/", http.StatusFound)
		default:
			w.(http.Flusher).Flush() // no Content-Length: the body is streamed
			w.Write(bytes.Repeat([]byte("x"), size))
		}
	}))
	defer srv.Close()
	get := func(c *http.Client, path string) ([]byte, error) {
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	}
	if _, err := get(NewClient(Options{}), "/"); !errors.Is(err, reach.ErrAddress) {
		t.Errorf("loopback with private networks refused: %v", err)
	}
	open := NewClient(Options{AllowPrivate: true})
	if body, err := get(open, "/"); err != nil || len(body) != MaxAnswerBytes {
		t.Errorf("an answer of exactly the limit: %d bytes, %v", len(body), err)
	}
	size++
	if _, err := get(open, "/"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("one byte over the limit: %v", err)
	}
	size = 10
	if body, err := get(open, "/here"); err != nil || len(body) != 10 {
		t.Errorf("a redirect on the same host: %q, %v", body, err)
	}
	if _, err := get(open, "/away"); !errors.Is(err, ErrRedirect) {
		t.Errorf("a redirect to another host: %v", err)
	}
}

// TestDescribeKeepsResolvedAddresses: a refused name is described by the
// name as given and why, never by the address it resolves to; an address
// typed as the host may be repeated.
func TestDescribeKeepsResolvedAddresses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	client := NewClient(Options{})
	for _, c := range []struct{ url, says string }{
		{"http://localhost:" + port + "/hook", "could not reach http://localhost:" + port + "/hook: refused: localhost resolves to a private network address"},
		{"http://127.0.0.1:" + port + "/hook", "private network address 127.0.0.1 not allowed"},
	} {
		_, err := client.Post(c.url, "application/json", strings.NewReader("{}"))
		got := Describe(c.url, err)
		if !strings.Contains(got, c.says) {
			t.Errorf("%s: %q, want %q", c.url, got, c.says)
		}
		if strings.HasPrefix(c.url, "http://localhost") && (strings.Contains(got, "127.0.0.1") || strings.Contains(got, "::1")) {
			t.Errorf("%s: %q names the address localhost resolves to", c.url, got)
		}
	}
}
