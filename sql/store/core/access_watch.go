package core

import (
	"context"
	"sync"

	"github.com/google/uuid"
)

// authChannel is notified, by database triggers, of every committed change to
// credentials, memberships, policies or their attachments (migration 0012).
const authChannel = "bunting_auth"

// accessWatch follows whether access may have changed, for caches of
// resolved actors (web/actorcache) to know when to forget them: the store
// knows when it changes access, and its listener hears of changes made
// anywhere (authChannel).
type accessWatch struct {
	mu sync.Mutex
	// version moves at every possible change; listening is whether the
	// listener hears other instances' changes.
	version   int64
	listening bool
	// local counts changes made through this store.
	local int64
}

// up follows the listening connection: whatever was resolved before it
// went up or down may be stale.
func (w *accessWatch) up(on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.listening = on
	w.version++
}

// moved: access may have changed, here or on another instance.
func (w *accessWatch) moved() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.version++
}

// localChanges is how many access changes this store has made.
func (w *accessWatch) localChanges() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.local
}

// AccessVersion tells caches of resolved actors when to forget them.
// version moves whenever access may have changed: a change made through
// this store (when it is made, and again when it commits), a notification
// of one made on any instance, the listener connecting or losing its
// connection. watched is false while no listener hears other instances'
// changes; then nothing resolved may be kept. Tests that change access
// behind the store's back wait for version to move.
func (s *Core) AccessVersion() (version int64, watched bool) {
	s.access.mu.Lock()
	defer s.access.mu.Unlock()
	return s.access.version, s.access.listening
}

// AccessChanged marks a change to access made through this store: caches
// forget at once and again when the transaction commits (InTx), before the
// notification comes back, so the change's author sees it on the very next
// request.
func (s *Core) AccessChanged() {
	s.access.mu.Lock()
	defer s.access.mu.Unlock()
	s.access.local++
	s.access.version++
}

// TouchAccessToken records that an access token was used now. Authenticate
// does on every lookup; a cache of actors does at most once a minute.
func (s *Core) TouchAccessToken(ctx context.Context, id uuid.UUID) error {
	return Translate(s.Q.TouchAccessToken(ctx, id))
}
