package web

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/views"
	"github.com/bunting-flags/bunting/web/httpx"
)

// conflictMessage explains a 409 next to the form that lost the race.
const conflictMessage = "Someone else changed this since you opened the page. Reload the page to see their change, then make yours again."

// changeProblems is formProblems for flag and segment changes: the comment
// is one of the fields, a lost race (409) and a broken rule (422) are
// explained above the form, which keeps what was typed.
func changeProblems(err error, f *views.Form, fields ...string) (int, error) {
	var rerr *core.RuleError
	switch {
	case errors.Is(err, core.ErrConflict):
		f.Errors, f.Error = map[string]string{}, conflictMessage
		return http.StatusConflict, nil
	case errors.As(err, &rerr) && !slices.Contains(fields, ruleFields[rerr.Code]):
		f.Errors, f.Error = map[string]string{}, explain(err).text
		return http.StatusUnprocessableEntity, nil
	}
	return formProblems(err, f, append(fields, "comment")...)
}

// byPathID reads what the path's "id" names, as get reads it for the person
// signed in: the one place a page turns its id into a record.
func byPathID[T any](c echo.Context, get func(ctx context.Context, a *core.Actor, id uuid.UUID) (T, error)) (uuid.UUID, T, error) {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		var none T
		return uuid.Nil, none, err
	}
	t, err := get(c.Request().Context(), actor(c), id)
	return id, t, err
}

// submitForm is the frame of a page's form that makes one change: the posted
// form F is bound and change makes the change from it; on success done
// answers (p.changed, p.opened); a problem the store names on one of fields
// shows the form again (form, from what was posted) with formProblems'
// status, drawn by redraw; any other error is the page's error.
func submitForm[F, Out any](c echo.Context, change func(ctx context.Context, a *core.Actor, posted F) (Out, error),
	done func(Out) error, form func(posted F) views.Form, redraw func(status int, f views.Form) error, fields ...string) error {
	var posted F
	if err := bind(c, &posted); err != nil {
		return err
	}
	out, err := change(c.Request().Context(), actor(c), posted)
	if err == nil {
		return done(out)
	}
	f := form(posted)
	status, err := formProblems(err, &f, fields...)
	if err != nil {
		return err
	}
	return redraw(status, f)
}

// redirect sends the browser to another page; htmx is told to load it.
func redirect(c echo.Context, to string) error {
	if isHTMX(c) {
		c.Response().Header().Set("HX-Redirect", to)
		return c.NoContent(http.StatusNoContent)
	}
	return c.Redirect(http.StatusSeeOther, to)
}

// postedOr is the form just posted, or a fresh one.
func postedOr(posted *views.Form, fresh func() *views.Form) *views.Form {
	if posted != nil {
		return posted
	}
	return fresh()
}

// postedValues keeps a change's comment and revision for the form shown again.
func postedValues(ch flagstore.Change, values map[string]string) map[string]string {
	values["comment"] = ch.Comment
	if ch.Revision != nil {
		values["revision"] = ch.Revision.String()
	}
	return values
}

// tagList reads tags typed separated by commas.
func tagList(s string) []string {
	tags := []string{}
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	return tags
}
