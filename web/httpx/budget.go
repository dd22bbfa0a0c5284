package httpx

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
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

// The shares of the budget one group of senders may hold at once, as
// divisors of the whole: every anonymous caller together (signing in, the
// pages' sign-in form) an eighth, each SDK secret an eighth, each signed-in
// principal (a member's sessions, or one access token) an eighth, and each
// organization, all its principals together, a quarter. A principal and an
// organization may always hold one body of the largest size decoded
// (BodyCost(MaxBodyBytes), about 10 MiB), whatever the budget. No one group
// can hold more than a quarter, so no group of senders starves another:
// with the server's 64 MiB, anonymous floods hold at most 8 MiB, a public
// client secret's 8 MiB, one member 10 MiB (leaving their organization's
// other members 6 MiB), and every other organization keeps 48 MiB. A
// secret's bodies are not its organization's: a client secret is public,
// and who sends with it is not the organization's members.
const (
	AnonymousShare    = 8
	SecretShare       = 8
	PrincipalShare    = 8
	OrganizationShare = 4
)

// memberShare is a principal's or an organization's share of a budget of
// size: at least one largest body, decoded.
func memberShare(size, divisor int64) int64 {
	return max(size/divisor, BodyCost(MaxBodyBytes))
}

// Sender is who a request's body is charged to, besides the whole budget.
type Sender uint8

const (
	// Anonymous is a request no credential has been resolved for.
	Anonymous Sender = iota
	// Member is a signed-in principal: a user's session or an access token,
	// in its organization.
	Member
	// SDKSecret is a request authenticated by an SDK secret.
	SDKSecret
)

// BodyBudget holds what request bodies take in memory, from the moment their
// bytes arrive until their request is answered, to one total for the
// process and a share of it per group of senders (AnonymousShare …). Each
// request's reader (ReadBody, ReadForm, BodyReader) reserves what it has
// received as it arrives, and the decoding's cost once the body is read:
// never what a body announces. The reservation is returned when the
// request ends. The API's routes that check their permission before their
// body, and the pages, which check the session first, take nothing for a
// caller they refuse.
type BodyBudget struct {
	size int64
	wait time.Duration
	rate BodyRate

	mu     sync.Mutex
	held   int64
	groups map[string]int64
	freed  chan struct{} // closed, and replaced, whenever bytes are returned
}

// NewBodyBudget returns a budget of size bytes, for which a request waits
// at most wait (the server's is BodyWait), whose bodies must arrive at
// DefaultBodyRate.
func NewBodyBudget(size int64, wait time.Duration) *BodyBudget {
	return &BodyBudget{size: size, wait: wait, rate: DefaultBodyRate, groups: map[string]int64{}, freed: make(chan struct{})}
}

// WithRate sets the rate bodies must arrive at, for a budget not yet in use.
func (b *BodyBudget) WithRate(r BodyRate) *BodyBudget {
	b.rate = r.orDefaults()
	return b
}

// Held reports what the whole budget holds, and what the group of key
// holds ("anonymous", "secret:<id>", "principal:<id>", "org:<id>").
func (b *BodyBudget) Held(key string) (total, group int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held, b.groups[key]
}

const accountKey = "bodyBudget"

// account is one request's share of the budget.
type account struct {
	budget *BodyBudget
	waited time.Duration // waiting for the budget, which the body rate does not count
	sender Sender
	keys   []string // the groups charged with the whole budget, fixed once something is held
	shares []int64
	held   int64
}

// Hold gives every request its account of the budget, and returns what the
// request reserved once it is answered.
func (b *BodyBudget) Hold(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		acc := &account{budget: b}
		acc.charge(Anonymous, []string{"anonymous"}, []int64{b.size / AnonymousShare})
		c.Set(accountKey, acc)
		wrapBody(c, acc)
		defer func() {
			if acc.held > 0 {
				b.give(acc, acc.held)
			}
		}()
		return next(c)
	}
}

func (a *account) charge(s Sender, keys []string, shares []int64) {
	if a.held > 0 { // charged already: the groups that hold it stay the ones returning it
		return
	}
	a.sender, a.keys, a.shares = s, keys, shares
}

// most is the most the request may hold: its smallest group's share.
func (a *account) most() int64 {
	m := a.budget.size
	for _, s := range a.shares {
		m = min(m, s)
	}
	return m
}

// SetPrincipal charges the request's bodies to who sent it, once its
// credentials are resolved: a Member's key is its user or access token and
// org its organization; an SDKSecret's key is the secret's id (org is not
// charged). Each surface's authentication calls it; a request that never
// does is Anonymous.
func SetPrincipal(c echo.Context, s Sender, key string, org uuid.UUID) {
	acc, ok := c.Get(accountKey).(*account)
	if !ok {
		return
	}
	size := acc.budget.size
	switch s {
	case Member:
		keys, shares := []string{"principal:" + key}, []int64{memberShare(size, PrincipalShare)}
		if org != uuid.Nil {
			keys, shares = append(keys, "org:"+org.String()), append(shares, memberShare(size, OrganizationShare))
		}
		acc.charge(s, keys, shares)
	case SDKSecret:
		acc.charge(s, []string{"secret:" + key}, []int64{size / SecretShare})
	default:
		acc.charge(Anonymous, []string{"anonymous"}, []int64{size / AnonymousShare})
	}
}

// anonymous reports whether no credential was resolved for the request.
func anonymous(c echo.Context) bool {
	acc, ok := c.Get(accountKey).(*account)
	return ok && acc.sender == Anonymous
}

// fits reports whether n more bytes fit the whole budget and each of the
// account's groups; b.mu is held.
func (b *BodyBudget) fits(a *account, n int64) bool {
	if b.held+n > b.size {
		return false
	}
	for i, k := range a.keys {
		if b.groups[k]+n > a.shares[i] {
			return false
		}
	}
	return true
}

// take charges n bytes to the budget and the account's groups, when they
// fit; otherwise it returns the channel closed when bytes are next returned.
func (b *BodyBudget) take(a *account, n int64) (bool, chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.fits(a, n) {
		return false, b.freed
	}
	b.held += n
	for _, k := range a.keys {
		b.groups[k] += n
	}
	a.held += n
	return true, nil
}

// give returns n of what the account holds, and wakes those waiting.
func (b *BodyBudget) give(a *account, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
	for _, k := range a.keys {
		if b.groups[k] -= n; b.groups[k] <= 0 {
			delete(b.groups, k)
		}
	}
	a.held -= n
	close(b.freed)
	b.freed = make(chan struct{})
}

// Reserve takes n bytes of the budget for the request's body until the
// request is answered, waiting at most the budget's wait (or the request's
// own deadline) for them: ErrBusy when they do not come in time. A request
// needing more than its group's share gets all of that share, once it is
// free. It returns what it took: n, or what was left of the share; n when
// there is no budget (handlers called outside the server).
func Reserve(c echo.Context, n int64) (int64, error) {
	acc, ok := c.Get(accountKey).(*account)
	if !ok || n <= 0 {
		return n, nil
	}
	n = min(n, acc.most()-acc.held)
	if n <= 0 {
		return 0, nil
	}
	b := acc.budget
	ok, freed := b.take(acc, n)
	if ok {
		return n, nil
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), b.wait)
	defer cancel()
	defer func(began time.Time) { acc.waited += time.Since(began) }(time.Now())
	for {
		select {
		case <-freed:
		case <-ctx.Done():
			if errors.Is(c.Request().Context().Err(), context.Canceled) {
				return 0, context.Canceled // the client went away while waiting
			}
			return 0, ErrBusy
		}
		if ok, freed = b.take(acc, n); ok {
			return n, nil
		}
	}
}

// Release gives back n bytes of what the request reserved, once it holds
// less than it did while reading (what it decoded, not the reading's
// buffers) and has work to do before it is answered.
func Release(c echo.Context, n int64) {
	acc, ok := c.Get(accountKey).(*account)
	if !ok {
		return
	}
	if n = min(n, acc.held); n > 0 {
		acc.budget.give(acc, n)
	}
}

// BusyRetryAfter is the Retry-After a request refused with ErrBusy is
// told: the bodies ahead of it are decoded within a second or so.
const BusyRetryAfter = "1"
