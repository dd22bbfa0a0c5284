package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/sdkdata"
)

// End users of an environment and their properties: FeatBit's EndUserController
// and EndUserPropertyController.

// getEndUser answers one end user.
func (h *Handler) getEndUser(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.SDK().GetEndUser(ctx, a, ids.Env, ids.ID)
	})
}

// searchEndUsers answers FeatBit's search (EndUserSearchFilter body).
func (h *Handler) searchEndUsers(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, f sdkdata.EndUserSearchFilter) (any, error) {
		return h.store.SDK().SearchEndUsers(ctx, a, ids.Env, f)
	})
}

// listEndUsers answers one keyset page (EndUserFilter body, CursorPagedResult).
func (h *Handler) listEndUsers(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, f sdkdata.EndUserFilter) (any, error) {
		return h.store.SDK().ListEndUsers(ctx, a, ids.Env, f)
	})
}

// upsertEndUser adds an end user or replaces its name and properties.
func (h *Handler) upsertEndUser(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in sdkdata.UpsertEndUser) (any, error) {
		return h.store.SDK().UpsertEndUser(ctx, a, ids.Env, in)
	})
}

// endUsersByKeys answers the end users with the keys the body lists.
func (h *Handler) endUsersByKeys(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, keys []string) (any, error) {
		return h.store.SDK().EndUsersByKeys(ctx, a, ids.Env, keys)
	})
}

// endUserFlags answers what every flag serves an end user now, and why.
func (h *Handler) endUserFlags(c echo.Context) error {
	return answerList(c, func(ctx context.Context, a *core.Actor, ids routeIDs, q listQuery) (any, error) {
		return h.store.SDK().EndUserFlags(ctx, a, ids.Env, ids.ID, sdkdata.EndUserFlagFilter{Name: q.name, IsArchived: q.archived, Page: q.page})
	})
}

// endUserSegments answers the segments an end user is in.
func (h *Handler) endUserSegments(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.SDK().EndUserSegments(ctx, a, ids.Env, ids.ID)
	})
}

// flagEndUsers answers FeatBit's get-by-featureflag: the users seen in a
// time range with what the flag serves them.
func (h *Handler) flagEndUsers(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	f := sdkdata.FlagEndUserFilter{Query: query(c, "query"), FeatureFlagKey: query(c, "featureFlagKey"),
		VariationID: query(c, "variationId"), From: queryMillis(c, "from"), To: queryMillis(c, "to"), Page: page(c)}
	users, err := h.store.SDK().FlagEndUsers(c.Request().Context(), actor(c), ids.Env, f)
	return respond(c, users, err)
}

// listEndUserProperties answers an environment's end-user properties.
func (h *Handler) listEndUserProperties(c echo.Context) error {
	return answer(c, func(ctx context.Context, a *core.Actor, ids routeIDs) (any, error) {
		return h.store.SDK().ListEndUserProperties(ctx, a, ids.Env)
	})
}

// upsertEndUserProperty adds the property with the path's id or changes it.
func (h *Handler) upsertEndUserProperty(c echo.Context) error {
	return answerBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs, in sdkdata.UpsertEndUserProperty) (any, error) {
		return h.store.SDK().UpsertEndUserProperty(ctx, a, ids.Env, ids.Property, in)
	})
}

// deleteEndUserProperty removes a property, answering true as FeatBit does.
func (h *Handler) deleteEndUserProperty(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	err = h.store.SDK().DeleteEndUserProperty(c.Request().Context(), actor(c), ids.Env, ids.ID)
	return respond(c, true, err)
}

// downloadEndUsers answers FeatBit's end-user file for the users matching
// the filter's searchText (at most 50,000, most recently seen first),
// written as they are read so memory holds one page of them.
func (h *Handler) downloadEndUsers(c echo.Context) error {
	ids, err := bindIDs(c)
	if err != nil {
		return err
	}
	var f sdkdata.EndUserFilter
	if err := bind(c, &f); err != nil {
		return err
	}
	ctx, a := c.Request().Context(), actor(c)
	props, err := h.store.SDK().EndUserPropertyNames(ctx, a, ids.Env)
	if err != nil {
		return err
	}
	names, err := json.Marshal(props)
	if err != nil {
		return err
	}
	w := c.Response()
	started := false
	n := 0
	err = h.store.SDK().EachEndUser(ctx, a, ids.Env, f.SearchText, func(u sdkdata.ImportUser) error {
		if !started {
			w.Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
			w.WriteHeader(http.StatusOK)
			if _, err := io.WriteString(w, `{"success":true,"errors":[],"data":{"userProperties":`+string(names)+`,"users":[`); err != nil {
				return err
			}
			started = true
		}
		b, err := json.Marshal(u)
		if err != nil {
			return err
		}
		if n > 0 {
			b = append([]byte{','}, b...)
		}
		n++
		_, err = w.Write(b)
		return err
	})
	if !started {
		if err != nil {
			return err // nothing written yet: the usual error answer
		}
		return respond(c, sdkdata.ImportUserData{Users: []sdkdata.ImportUser{}, UserProperties: props}, nil)
	}
	if err != nil {
		// The status is sent; cutting the body short makes it invalid JSON
		// rather than a file that looks complete.
		h.log.WarnContext(ctx, "end-user download cut short", "err", err)
		return nil
	}
	_, err = io.WriteString(w, `]}}`)
	return err
}
