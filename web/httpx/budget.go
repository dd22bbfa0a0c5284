package httpx

import (
	"context"
	"errors"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/sync/semaphore"
)

// DefaultBodyBudget is the memory request bodies may take at once, read and
// decoded, unless BUNTING_BODY_BUDGET says otherwise: six bodies of the
// largest size at once, hundreds of ordinary ones.
const DefaultBodyBudget = 64 << 20

// BodyWait is how long a request waits for its share of the budget before
// it is answered 503 ServiceUnavailable with Retry-After: long enough for
// the bodies ahead of it to be decoded, short of holding its client.
const BodyWait = 5 * time.Second

// ErrBusy is a request whose body found the budget spent for longer than
// it may wait.
var ErrBusy = errors.New("request bodies are using all of their memory budget")

// BodyBudget holds what request bodies take in memory, from before they are
// read until their request is answered, to one total for the process. Each
// request's reader reserves what its body may cost before reading it (the
// API's decoder, the end-user upload, the pages' forms, the SDK
// endpoints'); the reservation is returned when the request ends. The
// API's routes that check their permission before their body, and the
// pages, which check the session first, take nothing for a caller they
// refuse.
type BodyBudget struct {
	size int64
	wait time.Duration
	sem  *semaphore.Weighted
}

// NewBodyBudget returns a budget of size bytes, for which a request waits
// at most wait (the server's is BodyWait).
func NewBodyBudget(size int64, wait time.Duration) *BodyBudget {
	return &BodyBudget{size: size, wait: wait, sem: semaphore.NewWeighted(size)}
}

const accountKey = "bodyBudget"

// account is one request's share of the budget.
type account struct {
	budget *BodyBudget
	held   int64
}

// Hold gives every request its account of the budget, and returns what the
// request reserved once it is answered.
func (b *BodyBudget) Hold(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		acc := &account{budget: b}
		c.Set(accountKey, acc)
		defer func() {
			if acc.held > 0 {
				b.sem.Release(acc.held)
			}
		}()
		return next(c)
	}
}

// Reserve takes n bytes of the budget for the request's body until the
// request is answered, waiting at most the budget's wait (or the request's
// own deadline) for them: ErrBusy when they do not come in time. A request
// needing more than the whole budget gets all of it, once it is free.
// It returns what it took: n, or the whole budget; n when there is no
// budget (handlers called outside the server).
func Reserve(c echo.Context, n int64) (int64, error) {
	acc, ok := c.Get(accountKey).(*account)
	if !ok || n <= 0 {
		return n, nil
	}
	n = min(n, acc.budget.size-acc.held)
	if n <= 0 {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), acc.budget.wait)
	defer cancel()
	if err := acc.budget.sem.Acquire(ctx, n); err != nil {
		if errors.Is(c.Request().Context().Err(), context.Canceled) {
			return 0, context.Canceled // the client went away while waiting
		}
		return 0, ErrBusy
	}
	acc.held += n
	return n, nil
}

// Release gives back n bytes of what the request reserved, once it holds
// less than it did while reading (what it decoded, not the reading's
// buffers) and has work to do before it is answered.
func Release(c echo.Context, n int64) {
	acc, ok := c.Get(accountKey).(*account)
	if !ok {
		return
	}
	n = min(n, acc.held)
	if n > 0 {
		acc.held -= n
		acc.budget.sem.Release(n)
	}
}

// BusyRetryAfter is the Retry-After a request refused with ErrBusy is
// told: the bodies ahead of it are decoded within a second or so.
const BusyRetryAfter = "1"
