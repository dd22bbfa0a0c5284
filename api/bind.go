package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/jsonbody"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/web/httpx"
)

// bind decodes a JSON body into v. An empty body leaves v unchanged, for
// endpoints whose body is optional; required fields are the store's to check.
//
// The body is read once its share of the body budget is reserved, so run
// the route's permission check first: a caller refused there never has
// their body read. jsonbody decodes it, refusing with body_is_invalid a
// member named twice in one object in any case ({"name":"a","Name":"b"},
// at any depth: encoding/json would silently keep the last, and which one
// a client meant is a guess), and a top-level object that names none of
// the struct's fields (a misspelt or other API's field: answering 200
// would claim a change that did not happen). An empty object {} is still
// accepted like no body at all: routes whose body is optional (archive,
// restore, delete and toggle with an optional comment) are called with {}
// by clients, and on routes that need a field the store refuses it by
// that field's name (name_is_required …). A body of so many tiny values
// that decoding it would take more than jsonbody.Factor times its size is
// refused 413 RequestTooLarge, before it is decoded.
func bind(c echo.Context, v any) error { return bindWithin(c, v, httpx.MaxBodyBytes) }

// signInBodyBytes bounds the body of the routes a stranger may send a
// body to, signing in: an email and a password, and no large share of the
// body budget for anyone who has not signed in. The body reader holds any
// caller without credentials to this whatever the route (refreshing a
// session by its cookie, too).
const signInBodyBytes = httpx.AnonymousBodyBytes

// bindWithin is bind for a body of at most limit bytes.
func bindWithin(c echo.Context, v any, limit int64) error {
	body, err := httpx.ReadBody(c, limit)
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		return err
	}
	switch err := jsonbody.Decode(body, v); {
	case errors.Is(err, jsonbody.ErrTooCostly):
		return httpx.ErrTooLarge
	case err != nil:
		return core.Invalid("body_is_invalid")
	}
	return nil
}

// noBody refuses a body on a route that acts on its path alone: a body with
// members names nothing the route understands. No body,
// {} and null are accepted, as clients send them for "nothing".
func noBody(c echo.Context) error { return bind(c, &struct{}{}) }

// rawBody reads a body that the store decodes itself, such as a JSON Patch.
func rawBody(c echo.Context) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := bind(c, &raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, core.Invalid("body_is_invalid")
	}
	return raw, nil
}

// routeIDs are the uuid path parameters of a route (/envs/:envId/…/:id), by
// what they name. A route leaves the ones it does not name zero.
type routeIDs struct {
	ID, Env, TargetEnv, Project, Segment, Group, Member, Policy, Property, RelayProxy uuid.UUID
}

// bindIDs reads every uuid path parameter of the route at once: the one
// place the API turns a path's ids into uuids. A malformed one names
// nothing, so it is 404 ResourceNotFound, like an unknown id.
func bindIDs(c echo.Context) (routeIDs, error) {
	var ids routeIDs
	fields := map[string]*uuid.UUID{"id": &ids.ID, "envId": &ids.Env, "targetEnvId": &ids.TargetEnv, "projectId": &ids.Project,
		"segmentId": &ids.Segment, "groupId": &ids.Group, "memberId": &ids.Member, "policyId": &ids.Policy, "propertyId": &ids.Property,
		"rpId": &ids.RelayProxy}
	values := c.ParamValues()
	for i, name := range c.ParamNames() {
		dst, ok := fields[name]
		if !ok {
			continue // a key, a status or a token: not an id
		}
		id, err := uuid.Parse(values[i])
		if err != nil {
			return routeIDs{}, core.ErrNotFound
		}
		*dst = id
	}
	return ids, nil
}

// answer is the frame of a route that acts on its path alone: its ids
// bound, the store's operation called with the request's context and
// caller, and what it returns answered in the envelope.
func answer(c echo.Context, do func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error)) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	out, err := do(c.Request().Context(), actor(c), ids)
	return respond(c, out, err)
}

// answerBody is answer for a route that also takes a JSON body, decoded
// into In after the ids (bind).
func answerBody[In any](c echo.Context, do func(ctx context.Context, a *core.Actor, ids routeIDs, in In) (any, error)) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	var in In
	if err := bind(c, &in); err != nil {
		return err
	}
	out, err := do(c.Request().Context(), actor(c), ids, in)
	return respond(c, out, err)
}

// answerIAMList is answer for an IAM list: its filter read from the query
// (search names its search parameter; all its switch for every candidate,
// none when empty) before the store's list is called with it.
func answerIAMList(c echo.Context, search, all string, list func(ctx context.Context, a *core.Actor, ids routeIDs, f iam.IAMFilter) (any, error)) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		f, err := iamFilter(c, search, all)
		if err != nil {
			return nil, err
		}
		return list(ctx, a, ids, f)
	})
}

// listQuery is what FeatBit's segment and end-user-flag lists are filtered
// by: part of the name, archived or not, and the page.
type listQuery struct {
	name     string
	archived bool
	page     core.Page
}

// answerList is answer for those lists: their query read once here.
func answerList(c echo.Context, list func(ctx context.Context, a *core.Actor, ids routeIDs, q listQuery) (any, error)) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		archived, err := queryBool(c, "isArchived")
		if err != nil {
			return nil, err
		}
		return list(ctx, a, ids, listQuery{name: query(c, "name"), archived: archived, page: page(c)})
	})
}

// answerNoBody is answer for a change that acts on its path alone: a body
// naming anything is refused (noBody), and success answers true.
func answerNoBody(c echo.Context, change func(ctx context.Context, a *core.Actor, ids routeIDs) error) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		if err := noBody(c); err != nil {
			return nil, err
		}
		return true, change(ctx, a, ids)
	})
}
