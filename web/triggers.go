package web

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
	"github.com/bunting-flags/bunting/views"
)

// flagTriggers shows a flag's triggers.
func (p *pages) flagTriggers(c echo.Context) error { return p.flagPage(c, tabTriggers, flagState{}) }

// triggerActions are the choices of what a trigger does, in FeatBit's words.
func triggerActions(selected string) []views.Option {
	if selected == "" {
		selected = governance.TriggerTurnOff // what alerting systems mostly want
	}
	return []views.Option{
		{Value: governance.TriggerTurnOff, Label: "Turn the flag off", Selected: selected == governance.TriggerTurnOff},
		{Value: governance.TriggerTurnOn, Label: "Turn the flag on", Selected: selected == governance.TriggerTurnOn},
	}
}

func triggerActionWords(action string) string {
	if action == governance.TriggerTurnOn {
		return "Turns on"
	}
	return "Turns off"
}

// triggerName is how pages name a trigger: its description, else its token's start.
func triggerName(t governance.Trigger) string {
	if t.Description != "" {
		return t.Description
	}
	return "Trigger " + t.Token[:5] + "…"
}

// triggerURL is what a page shows once: the trigger's URL and a command calling it.
func (p *pages) triggerURL(name, token string) *views.TriggerURL {
	u := strings.TrimSuffix(p.baseURL.String(), "/") + "/api/v1/triggers/run/" + token
	return &views.TriggerURL{Name: name, URL: u, Curl: "curl -X POST " + u}
}

// triggersTab fills the triggers tab; manage tells whether the person may
// change the flag's triggers (toggle it).
func (p *pages) triggersTab(c echo.Context, f flagstore.Flag, manage bool, st flagState) (views.TriggersTab, error) {
	list, err := p.store.Governance().ListTriggers(c.Request().Context(), actor(c), f.ID)
	if err != nil {
		return views.TriggersTab{}, err
	}
	href := flagHref(f.Key) + "/triggers"
	t := views.TriggersTab{CSRF: csrfToken(c), Revealed: st.revealed, Actions: triggerActions("")}
	if manage && !f.IsArchived {
		t.Create = postedOr(st.trigger, func() *views.Form {
			form := p.form(c, "trigger", href, nil)
			return &form
		})
		t.Actions = triggerActions(t.Create.Values["action"])
	}
	for _, tr := range list {
		row := views.TriggerRow{ID: tr.ID.String(), Name: triggerName(tr), Action: triggerActionWords(tr.Action), Token: tr.Token,
			Enabled: tr.IsEnabled, LastTriggered: "Never", Count: tr.TriggeredTimes}
		if tr.LastTriggeredAt != nil {
			row.LastTriggered = when(*tr.LastTriggeredAt)
		}
		if manage {
			base := href + "/" + tr.ID.String()
			row.StatusAction, row.ResetAction, row.DeleteAction = base+"/status", base+"/reset", base+"/delete"
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// createTrigger makes a trigger and shows its URL, this once: the page is
// answered directly rather than redirected to, since the token is nowhere
// to be read again.
func (p *pages) createTrigger(c echo.Context) error {
	w, err := actingEnv(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	f, err := p.store.Flags().GetFlag(ctx, actor(c), w.id, c.Param("key"))
	if err != nil {
		return err
	}
	in := governance.TriggerInput{TargetID: f.ID, Type: governance.TriggerTypeFlagGeneral,
		Action: c.FormValue("action"), Description: c.FormValue("description")}
	t, err := p.store.Governance().CreateTrigger(ctx, actor(c), in)
	if err == nil {
		c.Set(flashKey, []views.Flash{{Kind: "success", Text: fmt.Sprintf("Trigger “%s” created.", triggerName(t))}})
		return p.flagPage(c, tabTriggers, flagState{revealed: p.triggerURL(triggerName(t), t.Token)})
	}
	form := p.form(c, "trigger", flagHref(f.Key)+"/triggers", map[string]string{"action": in.Action, "description": in.Description})
	status, err := changeProblems(err, &form, "action", "description")
	if err != nil {
		return err
	}
	return p.flagPage(c, tabTriggers, flagState{status: status, trigger: &form})
}

// triggerID reads the trigger named in the address; a malformed one is not found.
func triggerID(c echo.Context) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return uuid.Nil, core.ErrNotFound
	}
	return id, nil
}

// resetTrigger gives a trigger a new token and shows its URL, this once.
func (p *pages) resetTrigger(c echo.Context) error {
	id, err := triggerID(c)
	if err != nil {
		return err
	}
	t, err := p.store.Governance().ResetTriggerToken(c.Request().Context(), actor(c), id)
	if err != nil {
		return err
	}
	c.Set(flashKey, []views.Flash{{Kind: "success", Text: fmt.Sprintf("Token of “%s” reset: its old URL no longer works.", triggerName(t))}})
	return p.flagPage(c, tabTriggers, flagState{revealed: p.triggerURL(triggerName(t), t.Token)})
}

// setTriggerStatus enables or disables a trigger.
func (p *pages) setTriggerStatus(c echo.Context) error {
	id, err := triggerID(c)
	if err != nil {
		return err
	}
	on := c.FormValue("isEnabled") == "true"
	t, err := p.store.Governance().SetTriggerStatus(c.Request().Context(), actor(c), id, governance.TriggerStatusInput{IsEnabled: &on})
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("Trigger “%s” disabled: its URL answers 404.", triggerName(t))
	if on {
		msg = fmt.Sprintf("Trigger “%s” enabled.", triggerName(t))
	}
	return p.changed(c, flagHref(c.Param("key"))+"/triggers", msg, func() error { return p.flagPage(c, tabTriggers, flagState{}) })
}

// deleteTrigger removes a trigger.
func (p *pages) deleteTrigger(c echo.Context) error {
	id, err := triggerID(c)
	if err != nil {
		return err
	}
	if err := p.store.Governance().DeleteTrigger(c.Request().Context(), actor(c), id); err != nil {
		return err
	}
	return p.changed(c, flagHref(c.Param("key"))+"/triggers", "Trigger deleted.", func() error {
		return p.flagPage(c, tabTriggers, flagState{})
	})
}
