package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/jsonbody"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
)

// Forwarding limits.
const (
	// flushEvery is how often the events received are sent upstream: one
	// request per secret a second, however many SDKs report.
	flushEvery = time.Second
	// maxPendingBytes bounds the events held for the upstream; past it new
	// reports are dropped (and counted), never waited for, as an SDK does
	// not retry a report.
	maxPendingBytes = 32 << 20
	// maxBatchBytes starts a send early.
	maxBatchBytes = 4 << 20
	// secretShare is the part of maxPendingBytes one secret's events may
	// hold: a client secret is in every browser, so one must not crowd out
	// the others' reports.
	secretShare = 8
)

// Forwarder sends the SDKs' event reports to the upstream's
// /api/public/insight/track in batches: every report of a secret received
// within a second goes in one request, with that secret, so the upstream
// counts evaluations and keeps end users as if the SDKs had reported to it.
type Forwarder struct {
	base   *url.URL
	log    *slog.Logger
	client *http.Client

	mu      sync.Mutex
	pending map[string][]json.RawMessage // secret → events
	held    map[string]int               // secret → bytes of its pending events
	bytes   int
	kick    chan struct{}

	// Sent, Dropped and Failed count events (for the metrics).
	Sent, Dropped, Failed atomic.Int64
}

// NewForwarder returns a forwarder to base.
func NewForwarder(base *url.URL, log *slog.Logger) *Forwarder {
	return &Forwarder{base: base, log: log, client: &http.Client{Timeout: 5 * time.Second},
		pending: map[string][]json.RawMessage{}, held: map[string]int{}, kick: make(chan struct{}, 1)}
}

// Take is web/sdk's ForwardInsight: the report must be a JSON array; its
// events are held for the next batch and the SDK answered 200 at once.
func (f *Forwarder) Take(c echo.Context, _ sdkdata.SDKEnv, secret string, body []byte) error {
	var events []json.RawMessage
	if jsonbody.Decode(body, &events) != nil {
		return core.Invalid("body_is_invalid")
	}
	f.mu.Lock()
	if f.bytes+len(body) > maxPendingBytes || f.held[secret]+len(body) > maxPendingBytes/secretShare {
		f.mu.Unlock()
		f.Dropped.Add(int64(len(events)))
		return c.NoContent(http.StatusOK)
	}
	f.pending[secret] = append(f.pending[secret], events...)
	f.bytes += len(body)
	f.held[secret] += len(body)
	full := f.bytes >= maxBatchBytes
	f.mu.Unlock()
	if full {
		select {
		case f.kick <- struct{}{}:
		default:
		}
	}
	return c.NoContent(http.StatusOK)
}

// Run sends the batches until ctx ends, then once more.
func (f *Forwarder) Run(ctx context.Context) {
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			f.Flush(last)
			cancel()
			return
		case <-t.C:
		case <-f.kick:
		}
		f.Flush(ctx)
	}
}

// Flush sends what is held, one request per secret. A batch the upstream
// does not take (it is away) is held again while it fits.
func (f *Forwarder) Flush(ctx context.Context) {
	f.mu.Lock()
	batches := f.pending
	f.pending, f.held, f.bytes = map[string][]json.RawMessage{}, map[string]int{}, 0
	f.mu.Unlock()
	for secret, events := range batches {
		body, _ := json.Marshal(events)
		if err := f.send(ctx, secret, body); err != nil {
			f.mu.Lock()
			if f.bytes+len(body) <= maxPendingBytes && f.held[secret]+len(body) <= maxPendingBytes/secretShare {
				f.pending[secret] = append(events, f.pending[secret]...)
				f.bytes += len(body)
				f.held[secret] += len(body)
				f.mu.Unlock()
				continue
			}
			f.mu.Unlock()
			f.Failed.Add(int64(len(events)))
			f.log.Warn("relay: forwarding SDK events", "events", len(events), "err", err)
			continue
		}
		f.Sent.Add(int64(len(events)))
	}
}

type statusError int

func (e statusError) Error() string { return "upstream answered " + http.StatusText(int(e)) }

func (f *Forwarder) send(ctx context.Context, secret string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.base.JoinPath("/api/public/insight/track").String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", secret)
	req.Header.Set("Content-Type", "application/json")
	res, err := f.client.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode >= 500 || res.StatusCode == http.StatusTooManyRequests {
		return statusError(res.StatusCode)
	}
	// Any other refusal is final for this batch: sending it again gets the
	// same answer.
	return nil
}
