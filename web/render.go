package web

import (
	"bytes"
	"net/http"
	"net/url"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/views"
)

// render writes components, in order, as one HTML answer. It renders into a
// buffer first so that a failing component leaves nothing half-written and the
// error handler can still answer. Pages may show secrets, so nothing is cached.
func render(c echo.Context, status int, components ...templ.Component) error {
	var buf bytes.Buffer
	for _, comp := range components {
		if err := comp.Render(c.Request().Context(), &buf); err != nil {
			return err
		}
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return c.HTMLBlob(status, buf.Bytes())
}

// isHTMX tells a request htmx made, which wants regions rather than a page.
func isHTMX(c echo.Context) bool { return c.Request().Header.Get("HX-Request") == "true" }

// respond answers with a page: htmx gets the regions it swaps, with the
// messages; anything else the whole page, made by whole in its shell (title,
// under the navigation entry nav).
func (p *pages) respond(c echo.Context, status int, title, nav string, whole func(views.Shell) templ.Component, regions ...templ.Component) error {
	if isHTMX(c) {
		return render(c, status, append(regions, views.Flashes(p.flashes(c)))...)
	}
	shell, err := p.shell(c, title, nav)
	if err != nil {
		return err
	}
	return render(c, status, whole(shell))
}

// statusOr is status, or 200 when none was set.
func statusOr(status int) int {
	if status == 0 {
		return http.StatusOK
	}
	return status
}

// bind decodes a submitted form into one of web's form structs
// (form_inputs.go), which make the store's input types: the same types the
// API decodes from JSON.
func bind(c echo.Context, v any) error {
	return (&echo.DefaultBinder{}).BindBody(c, v)
}

// changed ends a successful change. A plain form post is redirected
// (post/redirect/get) and the message shown on the next page; htmx gets the
// regions it swaps, which show the message in place, and screen readers
// hear it.
func (p *pages) changed(c echo.Context, to, message string, regions func() error) error {
	if !isHTMX(c) {
		p.keepFlash(c, message)
		return c.Redirect(http.StatusSeeOther, to)
	}
	c.Set(flashKey, []views.Flash{{Kind: "success", Text: message}})
	announce(c, message) // the message region is replaced, which screen readers do not read out
	return regions()
}

// form starts the state of one of the page's forms.
func (p *pages) form(c echo.Context, id, action string, values map[string]string) views.Form {
	if values == nil {
		values = map[string]string{}
	}
	return views.Form{ID: id, CSRF: csrfToken(c), Action: action, Values: values}
}

// options lists choices with one of them selected.
func options(selected string, values ...string) []views.Option {
	out := make([]views.Option, len(values))
	for i, v := range values {
		out[i] = views.Option{Value: v, Label: v, Selected: v == selected}
	}
	return out
}

// former is one of web's form structs (form_inputs.go): what it decodes
// makes one of the store's input types.
type former[In any] interface{ input() In }

// postedInput binds the posted form F and is the store input it makes.
func postedInput[F former[In], In any](c echo.Context) (In, error) {
	var posted F
	if err := bind(c, &posted); err != nil {
		var none In
		return none, err
	}
	return posted.input(), nil
}

// postedEditor is postedInput for an editor whose rows (variations, rules)
// no form struct holds: it also returns every posted value, to read them
// from.
func postedEditor[F former[In], In any](c echo.Context) (In, url.Values, error) {
	in, err := postedInput[F](c)
	if err != nil {
		return in, nil, err
	}
	params, err := c.FormParams()
	return in, params, err
}
