package core

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
)

// Every change to a flag or a segment, from the API, a page, an import, a
// trigger or a change request applied, goes through one pipeline
// (RunChange), in the caller's transaction:
//
//  1. draft: the subject is locked and the edit applied to a copy;
//  2. check: who may make the change, on the subject before and after, and
//     whether it may be changed at all;
//  3. approve or apply: where the environment's changes need approval (its
//     setting, read under the lock, decides: never the caller), the change
//     becomes a change request when a Proposal comes with it and is refused
//     (ChangeRequestRequired) otherwise;
//  4. validate the subject whole, and apply it: stored under its new
//     revision, with its history entry, its change event for SDKs and other
//     instances, and its webhook deliveries, all in the same transaction.
//
// The stages differ between flags and segments (a segment has no change
// request, and a change of who is in it also touches the flags using it), so
// each provides them as a Subject; the order is the pipeline's. The
// pipeline is here, below the seams, so that both stand on it; R is the
// change request a subject's change may become (the flags seam's).

// Proposal is what turns a change into a change request where the
// environment's changes need approval: the request's reason and the
// reviewers its author names. A change without one is refused there, as
// FeatBit's direct routes refuse it; the pages send one with every change to
// what a flag serves, and the store decides whether it is used.
type Proposal struct {
	Reason    string
	Reviewers []uuid.UUID
}

// Outcome is what a change through the pipeline did: Changed is the subject
// as it left it (as it was, when nothing changed or a change request was
// made instead); Request is the change request made, nil when the change was
// applied.
type Outcome[T, R any] struct {
	Changed T
	Request *R
}

// NeedsRequest is the error a subject's Approval stage refuses a change
// with where a change request must make it (the flags seam's ApprovalError).
type NeedsRequest interface {
	error
	NeedsRequest()
}

// Subject is the stages of the pipeline one kind of subject (a flag, a
// segment) provides for one change.
type Subject[T, R any] interface {
	// Lock loads and locks the subject in q, with the environment the
	// change is made from.
	Lock(ctx context.Context, q *db.Queries) (T, EnvRow, error)
	// Clone copies the subject, for the edit to change.
	Clone(T) T
	// Check refuses a change the actor may not make, or that the subject
	// refuses whatever its environment's setting.
	Check(ctx context.Context, q *db.Queries, env EnvRow, before T, after *T) error
	// Approval is a NeedsRequest error where a change request must make
	// the change, nil where it may be applied now.
	Approval(ctx context.Context, q *db.Queries, env EnvRow, before, after T) error
	// Request stores the change as a change request of p, or refuses it
	// (need) where no change request can make it.
	Request(ctx context.Context, q *db.Queries, env EnvRow, before, after T, p Proposal, need error) (R, error)
	// Validate checks the subject as the change leaves it, whole.
	Validate(ctx context.Context, q *db.Queries, env EnvRow, before T, after *T) error
	// Same tells a change that changes nothing, which records nothing.
	Same(before, after T) bool
	// Apply stores the change, writes its history and notifies SDKs, other
	// instances and webhooks.
	Apply(ctx context.Context, q *db.Queries, env EnvRow, before, after T) (T, error)
}

// RunChange takes a change of sub made by edit through the pipeline, in q;
// p, when given, makes it a change request where one is needed.
func RunChange[T, R any](ctx context.Context, q *db.Queries, sub Subject[T, R], edit func(*T) error, p *Proposal) (Outcome[T, R], error) {
	before, env, err := sub.Lock(ctx, q)
	if err != nil {
		return Outcome[T, R]{}, err
	}
	after := sub.Clone(before)
	if err := edit(&after); err != nil {
		return Outcome[T, R]{}, err
	}
	if err := sub.Check(ctx, q, env, before, &after); err != nil {
		return Outcome[T, R]{}, err
	}
	if err := sub.Approval(ctx, q, env, before, after); err != nil {
		var need NeedsRequest
		if p == nil || !errors.As(err, &need) {
			return Outcome[T, R]{}, err
		}
		cr, err := sub.Request(ctx, q, env, before, after, *p, need)
		if err != nil {
			return Outcome[T, R]{}, err
		}
		return Outcome[T, R]{Changed: before, Request: &cr}, nil
	}
	if err := sub.Validate(ctx, q, env, before, &after); err != nil {
		return Outcome[T, R]{}, err
	}
	if sub.Same(before, after) {
		return Outcome[T, R]{Changed: before}, nil
	}
	out, err := sub.Apply(ctx, q, env, before, after)
	if err != nil {
		return Outcome[T, R]{}, err
	}
	return Outcome[T, R]{Changed: out}, nil
}
