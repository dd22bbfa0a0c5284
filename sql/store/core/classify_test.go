package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// TestClassify: every surface answers an error with the status and codes
// the store's classification gives it; a client gone away wins over what
// its request ran into, and anything unknown is a 500 without its text.
func TestClassify(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err    error
		status int
		codes  []string
	}{
		{fmt.Errorf("%w: %w", context.Canceled, ErrUnavailable), 499, []string{"ClientClosedRequest"}},
		{fmt.Errorf("%w: %w", context.Canceled, Invalid("name_is_required")), 499, []string{"ClientClosedRequest"}},
		{Invalid("name_is_required", "key_is_invalid"), 400, []string{"name_is_required", "key_is_invalid"}},
		{fmt.Errorf("create: %w", ErrKeyUsed), 422, []string{"KeyHasBeenUsed"}},
		{ErrBadCredentials, 401, []string{"EmailPasswordMismatch"}},
		{ErrUnauthenticated, 401, []string{"Unauthorized"}},
		{ErrForbidden, 403, []string{"Forbidden"}},
		{fmt.Errorf("flag: %w", ErrNotFound), 404, []string{"ResourceNotFound"}},
		{ErrConflict, 409, []string{"Conflict"}},
		{ErrTooManyRequests, 429, []string{"TooManyRequests"}},
		{fmt.Errorf("%w: dial", ErrUnavailable), 503, []string{"ServiceUnavailable"}},
		{context.DeadlineExceeded, 503, []string{"ServiceUnavailable"}},
		{ErrSSOState, 400, []string{"state_invalid"}},
		{ErrSSOStateExpired, 400, []string{"state_expired"}},
		{ErrSSONotConfigured, 400, []string{"not_configured"}},
		{ErrSSOEmailMissing, 403, []string{"email_missing"}},
		{ErrSSOEmailUnverified, 403, []string{"email_unverified"}},
		{errors.New("disk on fire"), 500, []string{"InternalServerError"}},
	}
	for _, tc := range cases {
		got := Classify(tc.err)
		if got.Status != tc.status || !slices.Equal(got.Codes, tc.codes) {
			t.Errorf("Classify(%v) = %d %v, want %d %v", tc.err, got.Status, got.Codes, tc.status, tc.codes)
		}
	}
	if code := Classify(Invalid()).Code(); code != "" {
		t.Errorf("code of a validation error without codes: got %q, want none", code)
	}
}
