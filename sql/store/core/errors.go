package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Domain errors. Classify says how every surface answers each of them.
var (
	// ErrNotFound: the id or key is unknown, or belongs to another organization.
	ErrNotFound = errors.New("not found")
	// ErrUnauthenticated: credentials are missing, unknown, expired or revoked.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrForbidden: the caller is known but not allowed the action.
	ErrForbidden = errors.New("forbidden")
	// ErrConflict: the request named a revision that is no longer current.
	ErrConflict = errors.New("conflict")
	// ErrTooManyRequests: too many attempts; try again later.
	ErrTooManyRequests = errors.New("too many requests")
	// ErrUnavailable: the database cannot be reached.
	ErrUnavailable = errors.New("service unavailable")
	// ErrBadCredentials: a sign-in whose email or password is wrong (one answer for both).
	ErrBadCredentials = errors.New("email or password mismatch")
)

// ValidationError lists every field problem of an input at once, as codes
// like "name_is_required" or "key_is_invalid": the field as the JSON body
// names it, then the problem. Details say the same with where exactly and
// why, for whoever marks the field.
type ValidationError struct {
	Codes   []string
	Details []FieldProblem
}

// FieldProblem is one problem of an input: the path of the part that is
// wrong ("variations[2].value", "rules[0].conditions[1].value"; a plain
// field's name), the code it is reported under, and why in words when
// there is more to say than the code ("not a number").
type FieldProblem struct {
	Path    string `json:"path"`
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
}

func (e *ValidationError) Error() string { return "invalid input: " + strings.Join(e.Codes, ", ") }

// RuleError is a business rule the input breaks, such as "KeyHasBeenUsed".
type RuleError struct {
	Code string
}

func (e *RuleError) Error() string { return e.Code }

// Business rule codes.
var (
	ErrKeyUsed               = &RuleError{"KeyHasBeenUsed"}
	ErrNameUsed              = &RuleError{"NameHasBeenUsed"}
	ErrEmailPasswordMismatch = &RuleError{"EmailPasswordMismatch"}
	ErrSysManagedPolicy      = &RuleError{"CannotModifySysManagedPolicy"}
	ErrLastOwner             = &RuleError{"CannotRemoveLastOwner"}
	ErrEmailUsed             = &RuleError{"EmailHasBeenUsed"}
	ErrLastOrganization      = &RuleError{"CannotDeleteLastOrganization"}
)

// The HTTP statuses domain errors are answered with, as net/http numbers
// them: the domain layer classifies errors but speaks no HTTP itself.
const (
	statusBadRequest          = 400
	statusUnauthorized        = 401
	statusForbidden           = 403
	statusNotFound            = 404
	statusConflict            = 409
	statusUnprocessableEntity = 422
	statusTooManyRequests     = 429
	statusInternalServerError = 500
	statusServiceUnavailable  = 503
)

// StatusClientClosedRequest is the status the request log gives a request
// whose client went away before its answer (nginx's 499). It is not a
// server failure and is never logged as one.
const StatusClientClosedRequest = 499

// Class is how an error is answered: its HTTP status and its error codes,
// which the API's envelope carries and by which pages choose their words.
type Class struct {
	Status int
	Codes  []string
}

// Code is the class's first code ("" for a validation error without any),
// the one that names it when it is not a validation error.
func (c Class) Code() string {
	if len(c.Codes) == 0 {
		return ""
	}
	return c.Codes[0]
}

// Classify decides the status and codes of every domain error, including
// cancellation (the client went away), a deadline and an unreachable
// database; it is the one place that does, so the API, the pages and the
// SDK endpoints answer a given error alike. An error that is none of these
// is a 500 InternalServerError, whose text is never shown.
func Classify(err error) Class {
	var verr *ValidationError
	var rerr *RuleError
	switch {
	case errors.Is(err, context.Canceled): // before all: whatever else it ran into on the way out
		return Class{StatusClientClosedRequest, []string{"ClientClosedRequest"}}
	case errors.As(err, &verr):
		return Class{statusBadRequest, verr.Codes}
	case errors.As(err, &rerr):
		return Class{statusUnprocessableEntity, []string{rerr.Code}}
	}
	for _, c := range classes {
		if errors.Is(err, c.err) {
			return Class{c.status, []string{c.code}}
		}
	}
	return Class{statusInternalServerError, []string{"InternalServerError"}}
}

// classes are the statuses and codes of the domain's sentinel errors.
var classes = []struct {
	err    error
	status int
	code   string
}{
	{ErrBadCredentials, statusUnauthorized, "EmailPasswordMismatch"},
	{ErrUnauthenticated, statusUnauthorized, "Unauthorized"},
	{ErrForbidden, statusForbidden, "Forbidden"},
	{ErrNotFound, statusNotFound, "ResourceNotFound"},
	{ErrConflict, statusConflict, "Conflict"},
	{ErrTooManyRequests, statusTooManyRequests, "TooManyRequests"},
	{ErrTriggerCreatorNotAllowed, statusForbidden, "TriggerCreatorNotAllowed"},
	{ErrUnavailable, statusServiceUnavailable, "ServiceUnavailable"},
	{context.DeadlineExceeded, statusServiceUnavailable, "ServiceUnavailable"},
	// Single sign-on's own failures, named as its log names them.
	{ErrSSOState, statusBadRequest, "state_invalid"},
	{ErrSSOStateExpired, statusBadRequest, "state_expired"},
	{ErrSSONotConfigured, statusBadRequest, "not_configured"},
	{ErrSSOEmailMissing, statusForbidden, "email_missing"},
	{ErrSSOEmailUnverified, statusForbidden, "email_unverified"},
}

// Invalid returns a ValidationError for the given codes.
func Invalid(codes ...string) error {
	details := make([]FieldProblem, len(codes))
	for i, code := range codes {
		field, _, _ := strings.Cut(code, "_is_")
		details[i] = FieldProblem{Path: field, Code: code}
	}
	return &ValidationError{Codes: codes, Details: details}
}

// translate turns database errors into domain errors; it is the one place
// that knows PostgreSQL error codes and constraint names.
func Translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505": // unique_violation: index names end in _key_unique or _name_unique
			if strings.HasSuffix(pgErr.ConstraintName, "_name_unique") {
				return ErrNameUsed
			}
			return ErrKeyUsed
		case "23503": // foreign_key_violation: the referenced row is gone
			return ErrNotFound
		case "22021", "22P05", "22P02": // bad encoding, NUL, malformed literal
			return Invalid("body_is_invalid")
		case "40001", "40P01": // serialization failure, deadlock: the writer lost a race
			return ErrConflict
		}
		if strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P03" {
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		return err
	}
	// A database that is down or went away mid-request: refused or dropped
	// connections, timeouts, a pool that cannot hand out a connection.
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	if errors.As(err, &connectErr) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err) // the cause stays for the log
	}
	return err
}

// Single sign-on failures the store detects; web explains each on a page.
var (
	// ErrSSOState: the state is unknown, already used, altered, or was begun
	// in another browser.
	ErrSSOState = errors.New("sso: state unknown, already used, or begun in another browser")
	// ErrSSOStateExpired: the attempt was begun more than SSOStateTTL ago.
	ErrSSOStateExpired = errors.New("sso: state expired")
	// ErrSSONotConfigured: the workspace has no OIDC settings (any more), or no organization.
	ErrSSONotConfigured = errors.New("sso: workspace has no single sign-on settings")
	// ErrSSOEmailMissing: the id token's email claim is missing or not an email address.
	ErrSSOEmailMissing = errors.New("sso: id token carries no usable email")
	// ErrSSOEmailUnverified: the id token says the email is not verified.
	ErrSSOEmailUnverified = errors.New("sso: email not verified by the provider")
)

// ErrTriggerCreatorNotAllowed refuses to run a trigger whose creator may no
// longer turn its flag on or off.
var ErrTriggerCreatorNotAllowed = errors.New("trigger creator not allowed")
