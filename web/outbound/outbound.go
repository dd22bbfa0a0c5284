// Package outbound is the one HTTP client Bunting uses to call servers that
// its users name (identity providers, webhooks). Admins choose those URLs, so the client must not become a window into the
// server's network: it refuses link-local and cloud-metadata addresses
// always and loopback and private ones unless allowed, checks the address
// when it dials (after DNS, so rebinding cannot slip past), follows no
// redirect to another host, bounds time and the size of every answer, and
// describes failures without the answer's text or the addresses names
// resolve to.
package outbound

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"github.com/bunting-flags/bunting/sql/reach"
)

// MaxAnswerBytes bounds every answer body read through the client.
const MaxAnswerBytes = 1 << 20

// Options tune a client.
type Options struct {
	// AllowPrivate lets the client reach loopback and private addresses
	// (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, 127/8, ::1):
	// for tests and providers inside the network. Link-local and metadata
	// addresses stay refused.
	AllowPrivate bool
	// Timeout bounds one request, answer included; 10 seconds when zero.
	Timeout time.Duration
}

// ErrTooLarge is an answer larger than MaxAnswerBytes.
var ErrTooLarge = errors.New("answer too large")

// ErrRedirect is a redirect to another host (or to plain http).
var ErrRedirect = errors.New("redirect to another host")

// NewClient returns a client that follows the rules above.
func NewClient(o Options) *http.Client {
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: %s", reach.ErrAddress, address)
		}
		return reach.Check(ap.Addr(), o.AllowPrivate)
	}}
	transport := &http.Transport{
		Proxy:                  nil, // a proxy would dial for us, past the check
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    5 * time.Second,
		ResponseHeaderTimeout:  o.Timeout,
		MaxResponseHeaderBytes: 64 << 10,
		IdleConnTimeout:        30 * time.Second,
		MaxIdleConns:           10,
	}
	return &http.Client{
		Timeout:   o.Timeout,
		Transport: boundedTransport{transport},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			first := via[0].URL
			if len(via) >= 3 || req.URL.Host != first.Host || (first.Scheme == "https" && req.URL.Scheme != "https") {
				return ErrRedirect
			}
			return nil
		},
	}
}

// boundedTransport cuts every answer body at MaxAnswerBytes: reading past it
// fails with ErrTooLarge, so no caller (go-oidc, oauth2, ours) can be made
// to hold a huge document.
type boundedTransport struct{ next http.RoundTripper }

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > MaxAnswerBytes {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, resp.ContentLength)
	}
	resp.Body = &boundedBody{body: resp.Body, left: MaxAnswerBytes}
	return resp, nil
}

type boundedBody struct {
	body io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the limit from a longer one.
		var one [1]byte
		n, err := b.body.Read(one[:])
		if n > 0 {
			return 0, ErrTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.body.Close() }

// Where names a URL in messages by scheme, host and path only: never its
// query, which may carry anything.
func Where(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "the URL"
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

// StatusError is an answer with an unexpected status; the body is not kept.
type StatusError struct {
	URL  string
	Code int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s answered %d %s", Where(e.URL), e.Code, http.StatusText(e.Code))
}

// Describe says why a request to raw failed in words safe to show an admin
// and to log: what kind of failure, never the answer's text or a raw error
// that could carry it.
func Describe(raw string, err error) string {
	var status *StatusError
	var addr *reach.AddressError
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostnameErr x509.HostnameError
	where := Where(raw)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &status):
		return status.Error()
	case errors.As(err, &addr) && literalHost(raw):
		return "could not reach " + where + ": " + addr.Error()
	case errors.As(err, &addr):
		// The address a name resolves to is the server's view of the
		// network: the message names the host as given and why, never it.
		return "could not reach " + where + ": refused: " + hostOf(raw) + " resolves to a " + addr.Reason + ", which is not allowed"
	case errors.Is(err, ErrTooLarge):
		return fmt.Sprintf("%s answered more than %d KiB", where, MaxAnswerBytes>>10)
	case errors.Is(err, ErrRedirect):
		return where + " redirected to another host, which Bunting does not follow"
	case errors.As(err, &certErr) || errors.As(err, &unknownCA) || errors.As(err, &hostnameErr):
		return "could not reach " + where + ": its certificate is not trusted"
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return "could not reach " + where + ": timed out"
	case errors.Is(err, context.Canceled):
		return "could not reach " + where + ": canceled"
	case errors.As(err, &dnsErr):
		return "could not reach " + where + ": no such host"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "could not reach " + where + ": connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "could not reach " + where + ": connection reset"
	case errors.As(err, &opErr):
		return "could not reach " + where + ": network error"
	default:
		return "could not reach " + where
	}
}

// literalHost tells whether a URL names its host by address, which a
// message may then repeat: it is what the admin typed.
func literalHost(raw string) bool {
	_, err := netip.ParseAddr(hostOf(raw))
	return err == nil
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
