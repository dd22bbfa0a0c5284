package limit

import (
	"time"

	"github.com/google/uuid"
	"golang.org/x/time/rate"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// Single sign-on starts. Beginning one stores nothing, so it cannot fill
// anything; the limit only keeps one address from spending the server's
// time: one address begins SSOStartBurst at once, then one every
// ssoStartEvery.
const (
	SSOStartBurst = 30
	ssoStartEvery = 2 * time.Second
)

// Trigger calls. A trigger's URL is called by alerting systems, which may
// retry in a storm: TriggerBurst calls at once, then one every
// TriggerRefill, per trigger. Past that a call answers 429 and changes
// nothing.
const (
	TriggerBurst  = 5
	TriggerRefill = 10 * time.Second
	// TriggerMissBurst unknown tokens (or disabled triggers) are answered
	// per client address, then one a second (429 beyond): a scanner is told
	// to stop, while a real token from that address still runs.
	TriggerMissBurst = 30
)

// Access tokens: ten at once, then one a minute, per account and per
// address.
const (
	tokenMintBurst = 10
	tokenMintEvery = time.Minute
)

// Edge is the rate limits of the management surfaces (the JSON API and the
// pages), one of each per process: both surfaces mint access tokens, and
// share one allowance. Each Allow method takes a token from the buckets a
// request counts against and reports whether it may go on; refused, the
// surface answers store.ErrTooManyRequests without asking the store.
type Edge struct {
	tokenMinting, ssoStarts, triggerRuns, triggerMisses *Limiter
}

// NewEdge returns the management surfaces' limits.
func NewEdge() *Edge {
	return &Edge{
		tokenMinting:  New(rate.Every(tokenMintEvery), tokenMintBurst),
		ssoStarts:     New(rate.Every(ssoStartEvery), SSOStartBurst),
		triggerRuns:   New(rate.Every(TriggerRefill), TriggerBurst),
		triggerMisses: New(rate.Every(time.Second), TriggerMissBurst),
	}
}

// AllowTokenMint counts a request of a to create an access token, against
// its account and its address. Only a signed-in user in an organization may
// create one; anyone else is refused by the store (an access token cannot
// mint tokens), and is not counted here, so an access token never spends
// its creator's allowance and such requests keep the store's answer.
func (e *Edge) AllowTokenMint(a *core.Actor) bool {
	if a.IsToken() || a.OrgID == uuid.Nil {
		return true
	}
	keys := []string{"user:" + a.UserID.String()}
	if a.Address != "" {
		keys = append(keys, "addr:"+a.Address)
	}
	return e.tokenMinting.Allow(keys...)
}

// AllowSSOStart counts a single sign-on attempt begun from address.
func (e *Edge) AllowSSOStart(address string) bool {
	return e.ssoStarts.Allow("addr:" + address)
}

// AllowTriggerRun counts a call of the trigger id: store.RunTrigger asks
// once it has found the trigger by its token.
func (e *Edge) AllowTriggerRun(id uuid.UUID) bool {
	return e.triggerRuns.Allow(id.String())
}

// AllowTriggerMiss counts a trigger call from address that named no
// enabled trigger (store.ErrNotFound). Only misses count, so an alerting
// system sharing an address with a misconfigured one (or with a guesser)
// still runs its own trigger.
func (e *Edge) AllowTriggerMiss(address string) bool {
	return e.triggerMisses.Allow("addr:" + address)
}
