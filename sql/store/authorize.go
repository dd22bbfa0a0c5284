package store

import (
	"context"

	"github.com/google/uuid"
)

// What an operation requires whatever its input says, for the API to
// refuse a caller before reading a body it would never act on: reading and
// decoding a body costs memory, and a caller who may not make the request
// should cost nothing. Each is the very check the operations it stands for
// make first, not a rule of its own; the operations still make it.

// envMemoKey keys, in a request's context, the environment its check
// loaded (envMemo).
type envMemoKey struct{}

// envMemo is the environment a request loaded first, for environmentOf.
type envMemo struct {
	env    envRow
	loaded bool
}

// RememberEnvironment returns a context of one request in which the
// environment it loads first is kept, so the check made before its body and
// the operation after it read the environment once: the operation still
// makes the check, now without a second lookup. The environment is read
// outside the operation's transaction either way.
func RememberEnvironment(ctx context.Context) context.Context {
	return context.WithValue(ctx, envMemoKey{}, &envMemo{})
}

// AuthorizeIAM checks what every identity and access management operation
// requires: the caller's organization, and CanManageIAM.
func (s *Store) AuthorizeIAM(a *Actor) error {
	_, err := a.iamOrg(&validator{})
	return err
}

// AuthorizeEndUserReads checks what reading an environment's end users
// requires (searching, listing, looking up and downloading them,
// evaluating a flag for one): reading the environment.
func (s *Store) AuthorizeEndUserReads(ctx context.Context, a *Actor, envID uuid.UUID) error {
	_, err := s.readableEnv(ctx, a, envID)
	return err
}

// AuthorizeEndUserChanges checks what changing an environment's end users
// and their properties requires (upserting, uploading a file, setting a
// property): see writableEnv.
func (s *Store) AuthorizeEndUserChanges(ctx context.Context, a *Actor, envID uuid.UUID) error {
	_, err := s.writableEnv(ctx, a, envID)
	return err
}

// AuthorizeFlagCreation checks what creating a flag in an environment
// requires before its key and tags are known.
func (s *Store) AuthorizeFlagCreation(ctx context.Context, a *Actor, envID uuid.UUID) error {
	env, err := s.environmentOf(ctx, a, envID)
	if err != nil {
		return err
	}
	return mayCreateFlag(a, env)
}

// AuthorizeSegmentCreation checks what creating a segment in an
// environment requires before its key and tags are known.
func (s *Store) AuthorizeSegmentCreation(ctx context.Context, a *Actor, envID uuid.UUID) error {
	env, err := s.environmentOf(ctx, a, envID)
	if err != nil {
		return err
	}
	return mayCreateSegment(a, env)
}
