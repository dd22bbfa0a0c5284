package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store"
)

// End users of an environment and their properties: FeatBit's EndUserController
// and EndUserPropertyController.

// getEndUser answers one end user.
func (h *Handler) getEndUser(c echo.Context) error {
	envID, err := PathID(c, "envId")
	if err != nil {
		return err
	}
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	u, err := h.store.GetEndUser(c.Request().Context(), actor(c), envID, id)
	return respond(c, u, err)
}

// searchEndUsers answers FeatBit's search (EndUserSearchFilter body).
func (h *Handler) searchEndUsers(c echo.Context) error {
	envID, err := PathID(c, "envId")
	if err != nil {
		return err
	}
	var f store.EndUserSearchFilter
	if err := bind(c, &f); err != nil {
		return err
	}
	users, err := h.store.SearchEndUsers(c.Request().Context(), actor(c), envID, f)
	return respond(c, users, err)
}

// listEndUsers answers one keyset page (EndUserFilter body, CursorPagedResult).
func (h *Handler) listEndUsers(c echo.Context) error {
	envID, err := PathID(c, "envId")
	if err != nil {
		return err
	}
	var f store.EndUserFilter
	if err := bind(c, &f); err != nil {
		return err
	}
	users, err := h.store.ListEndUsers(c.Request().Context(), actor(c), envID, f)
	return respond(c, users, err)
}

// upsertEndUser adds an end user or replaces its name and properties.
func (h *Handler) upsertEndUser(c echo.Context) error {
	envID, err := PathID(c, "envId")
	if err != nil {
		return err
	}
	var in store.UpsertEndUser
	if err := bind(c, &in); err != nil {
		return err
	}
	u, err := h.store.UpsertEndUser(c.Request().Context(), actor(c), envID, in)
	return respond(c, u, err)
}

// endUsersByKeys answers the end users with the keys the body lists.
func (h *Handler) endUsersByKeys(c echo.Context) error {
	envID, err := PathID(c, "envId")
	if err != nil {
		return err
	}
	var keys []string
	if err := bind(c, &keys); err != nil {
		return err
	}
	users, err := h.store.EndUsersByKeys(c.Request().Context(), actor(c), envID, keys)
	return respond(c, users, err)
}

// endUserFlags answers what every flag serves an end user now, and why.
func (h *Handler) endUserFlags(c echo.Context) error {
	envID, err := PathID(c, "envId")
	if err != nil {
		return err
	}
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	archived, err := queryBool(c, "isArchived")
	if err != nil {
		return err
	}
	flags, err := h.store.EndUserFlags(c.Request().Context(), actor(c), envID, id,
		store.EndUserFlagFilter{Name: query(c, "name"), IsArchived: archived, Page: page(c)})
	return respond(c, flags, err)
}

// endUserSegments answers the segments an end user is in.
func (h *Handler) endUserSegments(c echo.Context) error {
	envID, err := PathID(c, "envId")
	if err != nil {
		return err
	}
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	segments, err := h.store.EndUserSegments(c.Request().Context(), actor(c), envID, id)
	return respond(c, segments, err)
}

// flagEndUsers answers FeatBit's get-by-featureflag: the users seen in a
// time range with what the flag serves them.
func (h *Handler) flagEndUsers(c echo.Context) error {
	envID, err := PathID(c, "envId")
	if err != nil {
		return err
	}
	f := store.FlagEndUserFilter{Query: query(c, "query"), FeatureFlagKey: query(c, "featureFlagKey"),
		VariationID: query(c, "variationId"), From: queryMillis(c, "from"), To: queryMillis(c, "to"), Page: page(c)}
	users, err := h.store.FlagEndUsers(c.Request().Context(), actor(c), envID, f)
	return respond(c, users, err)
}

// listEndUserProperties answers an environment's end-user properties.
func (h *Handler) listEndUserProperties(c echo.Context) error {
	envID, err := PathID(c, "envId")
	if err != nil {
		return err
	}
	props, err := h.store.ListEndUserProperties(c.Request().Context(), actor(c), envID)
	return respond(c, props, err)
}

// upsertEndUserProperty adds the property with the path's id or changes it.
func (h *Handler) upsertEndUserProperty(c echo.Context) error {
	envID, err := PathID(c, "envId")
	if err != nil {
		return err
	}
	id, err := PathID(c, "propertyId")
	if err != nil {
		return err
	}
	var in store.UpsertEndUserProperty
	if err := bind(c, &in); err != nil {
		return err
	}
	p, err := h.store.UpsertEndUserProperty(c.Request().Context(), actor(c), envID, id, in)
	return respond(c, p, err)
}

// deleteEndUserProperty removes a property, answering true as FeatBit does.
func (h *Handler) deleteEndUserProperty(c echo.Context) error {
	envID, err := PathID(c, "envId")
	if err != nil {
		return err
	}
	id, err := PathID(c, "id")
	if err != nil {
		return err
	}
	err = h.store.DeleteEndUserProperty(c.Request().Context(), actor(c), envID, id)
	return respond(c, true, err)
}

// maxUploadBytes bounds an end-user file: 50,000 users of about 600 bytes.
const maxUploadBytes = 32 << 20

// uploadEndUsers imports FeatBit's end-user file (ImportUserData JSON) sent
// as the multipart field "file"; no file, or an empty one, changes nothing,
// as in FeatBit. A JSON body (up to the API's body limit) is taken as the file.
func (h *Handler) uploadEndUsers(c echo.Context) error {
	envID, err := PathID(c, "envId")
	if err != nil {
		return err
	}
	r := c.Request()
	// The file's JSON may also come as the body itself, for scripts.
	if strings.HasPrefix(r.Header.Get(echo.HeaderContentType), echo.MIMEApplicationJSON) {
		var data store.ImportUserData
		if err := bind(c, &data); err != nil {
			return err
		}
		_, err = h.store.ImportEndUsers(r.Context(), actor(c), envID, data)
		return respond(c, true, err)
	}
	if r.ContentLength > maxUploadBytes {
		return errTooLarge
	}
	r.Body = http.MaxBytesReader(c.Response(), r.Body, maxUploadBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		return store.Invalid("file_is_invalid")
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return respond(c, true, nil) // no file
		}
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errTooLarge
		}
		if err != nil {
			return store.Invalid("file_is_invalid")
		}
		if part.FormName() != "file" {
			continue
		}
		body, err := io.ReadAll(part)
		if errors.As(err, &tooLarge) {
			return errTooLarge
		}
		if err != nil {
			return store.Invalid("file_is_invalid")
		}
		if len(bytes.TrimSpace(body)) == 0 {
			return respond(c, true, nil)
		}
		var data store.ImportUserData
		if !utf8.Valid(body) || json.Unmarshal(body, &data) != nil {
			return store.Invalid("file_is_invalid")
		}
		_, err = h.store.ImportEndUsers(r.Context(), actor(c), envID, data)
		return respond(c, true, err)
	}
}

// downloadEndUsers answers FeatBit's end-user file for the users matching
// the filter's searchText (at most 50,000, most recently seen first),
// written as they are read so memory holds one page of them.
func (h *Handler) downloadEndUsers(c echo.Context) error {
	envID, err := PathID(c, "envId")
	if err != nil {
		return err
	}
	var f store.EndUserFilter
	if err := bind(c, &f); err != nil {
		return err
	}
	ctx, a := c.Request().Context(), actor(c)
	props, err := h.store.EndUserPropertyNames(ctx, a, envID)
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
	err = h.store.EachEndUser(ctx, a, envID, f.SearchText, func(u store.ImportUser) error {
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
		return respond(c, store.ImportUserData{Users: []store.ImportUser{}, UserProperties: props}, nil)
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
