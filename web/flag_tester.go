package web

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/describe"
	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/views"
)

// The "test a user" panel of a flag's page, and how long ago SDKs last
// evaluated a flag.

// evaluatedAgo says how long ago SDKs last evaluated a flag, so stale flags
// stand out: "3 minutes ago", or "never".
func evaluatedAgo(at *time.Time, now time.Time) string {
	if at == nil {
		return "never"
	}
	d := now.Sub(*at)
	unit := func(n int, one string) string {
		if n == 1 {
			return "1 " + one + " ago"
		}
		return fmt.Sprintf("%d %ss ago", n, one)
	}
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return unit(int(d/time.Minute), "minute")
	case d < 24*time.Hour:
		return unit(int(d/time.Hour), "hour")
	}
	return unit(int(d/(24*time.Hour)), "day")
}

// testFlag evaluates the flag for the user the "test a user" panel
// describes, with the engine the SDKs use.
func (p *pages) testFlag(c echo.Context) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	key := c.Param("key")
	values := map[string]string{"keyId": c.FormValue("keyId"), "name": c.FormValue("name"), "properties": c.FormValue("properties")}
	t := &views.FlagTester{Form: p.form(c, "tester", flagHref(key)+"/test", values)}
	u := eval.EndUser{KeyID: strings.TrimSpace(values["keyId"])}
	if name := strings.TrimSpace(values["name"]); name != "" {
		u.Name = &name
	}
	for i, line := range strings.Split(values["properties"], "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		name, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.TrimSpace(name) == "" {
			t.Form.Errors = map[string]string{"properties": fmt.Sprintf("Line %d is not name=value: %q", i+1, strings.TrimSpace(line))}
			return p.flagPage(c, tabTargeting, flagState{status: http.StatusBadRequest, tester: t})
		}
		u.CustomizedProperties = append(u.CustomizedProperties, eval.UserProperty{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
	}
	ctx := c.Request().Context()
	ev, err := p.store.SDK().EvaluateFlag(ctx, actor(c), w.id, key, u)
	status, err := formProblems(err, &t.Form, "keyId")
	if err != nil {
		return err
	}
	if status == http.StatusOK {
		f, err := p.store.Flags().GetFlag(ctx, actor(c), w.id, key)
		if err != nil {
			return err
		}
		names, err := p.segmentNames(c, w, describe.FlagSegmentIDs(f))
		if err != nil {
			return err
		}
		t.Result = &views.FlagTestResult{Variation: "nothing", Reason: ev.Reason, Why: describe.Explain(f, u, ev, names)}
		if ev.Variation != nil {
			t.Result.Variation, t.Result.Value = variationLabel(*ev.Variation), ev.Variation.Value
		}
	}
	return p.flagPage(c, tabTargeting, flagState{status: status, tester: t})
}
