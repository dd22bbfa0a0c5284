package web

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
	"github.com/bunting-flags/bunting/views"
	"github.com/bunting-flags/bunting/web/httpx"
)

const (
	navWebhooks         = "webhooks"
	deliveryLogPageSize = 20
)

// webhooks lists the organization's webhooks.
func (p *pages) webhooks(c echo.Context) error {
	hooks, err := p.store.Webhooks().ListWebhooks(c.Request().Context(), actor(c), webhooks.WebhookFilter{Page: core.Page{Size: core.MaxPageSize}})
	if err != nil {
		return err
	}
	vm := views.Webhooks{}
	for _, w := range hooks.Items {
		row := views.WebhookRow{Name: w.Name, URL: w.URL, Href: "/webhooks/" + w.ID.String(),
			Events: fmt.Sprintf("%d %s", len(w.Events), plural(len(w.Events), "event", "events")),
			Status: views.Badge{Label: "Inactive", Kind: "gray"}, Last: views.Badge{Label: "Never", Kind: "gray"}}
		if w.IsActive {
			row.Status = views.Badge{Label: "Active", Kind: "green"}
		}
		if d := w.LastDelivery; d != nil {
			row.Last = deliveryBadge(d.Success, d.Response)
		}
		vm.Rows = append(vm.Rows, row)
	}
	if vm.Shell, err = p.shell(c, "Webhooks", navWebhooks); err != nil {
		return err
	}
	return render(c, http.StatusOK, views.WebhooksPage(vm))
}

// deliveryBadge says how an attempt went: its status, or that there was no answer.
func deliveryBadge(success bool, status *int) views.Badge {
	label := "No answer"
	if status != nil {
		label = strconv.Itoa(*status) + " " + http.StatusText(*status)
	}
	if success {
		return views.Badge{Label: label, Kind: "green"}
	}
	return views.Badge{Label: label, Kind: "red"}
}

// newWebhook shows the form that creates a webhook.
func (p *pages) newWebhook(c echo.Context) error {
	f := p.form(c, "webhook", "/webhooks", map[string]string{"isActive": "true"})
	return p.webhookPage(c, http.StatusOK, nil, f, nil, nil)
}

// webhookPage renders the new webhook's form (w nil) or a webhook's page
// with its delivery log; scopes and events are what the form checks.
func (p *pages) webhookPage(c echo.Context, status int, w *webhooks.Webhook, f views.Form, scopes, events []string) error {
	ctx := c.Request().Context()
	a := actor(c)
	choices, err := p.store.Webhooks().WebhookScopes(ctx, a)
	if err != nil {
		return err
	}
	vm := views.WebhookEdit{Form: f, SecretHint: "Signs every delivery: X-FeatBit-Signature-256 is sha256= and the HMAC-SHA256 of the body."}
	for _, sc := range choices {
		checked := slices.Contains(scopes, sc.Scope()) || (scopes == nil && w != nil && w.Covers(sc.ProjectID, sc.EnvID))
		vm.Scopes = append(vm.Scopes, views.Check{Value: sc.Scope(), Label: sc.ProjectName + " / " + sc.EnvName, Checked: checked})
	}
	if events == nil && w != nil {
		events = w.Events
	}
	for _, e := range webhooks.WebhookEvents {
		kind, what, _ := strings.Cut(e, ".")
		ch := views.Check{Value: e, Label: upperFirst(strings.ReplaceAll(what, "_", " ")), Checked: slices.Contains(events, e)}
		switch kind {
		case "segment":
			vm.SegmentEvents = append(vm.SegmentEvents, ch)
		case "change_request":
			vm.RequestEvents = append(vm.RequestEvents, ch)
		default:
			vm.FlagEvents = append(vm.FlagEvents, ch)
		}
	}
	title := "New webhook"
	if w != nil {
		title = w.Name
		vm.Name, vm.Undeliverable = w.Name, w.Undeliverable
		vm.SecretSet = w.HasSecret
		if vm.SecretSet {
			vm.SecretHint = "A secret is set and signs every delivery; it is not shown again. Leave blank to keep it."
		}
		base := "/webhooks/" + w.ID.String()
		vm.TestAction, vm.DeleteAction = base+"/test", base+"/delete"
		if vm.Log, err = p.deliveryLog(c, w.ID); err != nil {
			return err
		}
	}
	if vm.Shell, err = p.shell(c, title, navWebhooks); err != nil {
		return err
	}
	if w == nil {
		return render(c, status, views.WebhookNewPage(vm))
	}
	return render(c, status, views.WebhookPage(vm))
}

// deliveryLog is the page of a webhook's log the request names ("page", from
// 1). Whoever may not read every environment the log is about sees the
// webhook without it.
func (p *pages) deliveryLog(c echo.Context, id uuid.UUID) (views.WebhookLog, error) {
	number := 1
	if n, err := strconv.Atoi(c.QueryParam("page")); err == nil && n > 0 {
		number = n
	}
	log, err := p.store.Webhooks().ListWebhookDeliveries(c.Request().Context(), actor(c), id,
		webhooks.WebhookDeliveryFilter{Page: core.Page{Index: number - 1, Size: deliveryLogPageSize}})
	if errors.Is(err, core.ErrForbidden) {
		return views.WebhookLog{Withheld: "Its deliveries carry changes in environments you may not read, so they are not shown."}, nil
	}
	if err != nil {
		return views.WebhookLog{}, err
	}
	var out views.WebhookLog
	for _, d := range log.Items {
		row := views.DeliveryRow{Time: d.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"), Event: d.Events,
			Latency: fmt.Sprintf("%d ms", d.LatencyMs)}
		var status *int
		if d.Response != nil {
			status = &d.Response.StatusCode
			row.Excerpt = d.Response.Body
		}
		if d.Error != nil {
			row.Excerpt = d.Error.Message
		}
		row.Status = deliveryBadge(d.Success, status)
		out.Rows = append(out.Rows, row)
	}
	last := max(1, int((log.TotalCount+deliveryLogPageSize-1)/deliveryLogPageSize))
	out.Pager.Label = fmt.Sprintf("Page %d of %d · %d %s", number, last, log.TotalCount, plural(int(log.TotalCount), "attempt", "attempts"))
	base := "/webhooks/" + id.String() + "?page="
	if number > 1 {
		out.Pager.Prev = base + strconv.Itoa(min(number-1, last))
	}
	if number < last {
		out.Pager.Next = base + strconv.Itoa(number+1)
	}
	return out, nil
}

// postedWebhook reads the webhook form; the values keep what was typed.
func postedWebhook(c echo.Context) (webhooks.WebhookInput, map[string]string, []string, []string, error) {
	form, err := c.FormParams()
	if err != nil {
		return webhooks.WebhookInput{}, nil, nil, nil, err
	}
	in := webhooks.WebhookInput{Name: form.Get("name"), URL: form.Get("url"), Scopes: form["scopes"], Events: form["events"],
		IsActive: form.Get("isActive") == "true", PayloadTemplateType: form.Get("payloadTemplateType")}
	values := map[string]string{"name": in.Name, "url": in.URL, "headers": form.Get("headers"), "isActive": form.Get("isActive"),
		"payloadTemplateType": in.PayloadTemplateType}
	// A blank secret keeps the stored one; removing it is said with its own box.
	if secret := form.Get("secret"); secret != "" {
		in.Secret = &secret
	} else if form.Get("removeSecret") == "true" {
		in.Secret = new(string)
	}
	in.Headers = []webhooks.WebhookHeader{}
	for _, line := range strings.Split(form.Get("headers"), "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			name, value = line, "\n" // not "Name: value": the store names the field
		}
		in.Headers = append(in.Headers, webhooks.WebhookHeader{Key: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
	}
	scopes, events := form["scopes"], form["events"]
	if scopes == nil {
		scopes = []string{}
	}
	if events == nil {
		events = []string{}
	}
	return in, values, scopes, events, nil
}

// createWebhook creates a webhook and opens its page.
func (p *pages) createWebhook(c echo.Context) error {
	in, values, scopes, events, err := postedWebhook(c)
	if err != nil {
		return err
	}
	w, err := p.store.Webhooks().CreateWebhook(c.Request().Context(), actor(c), in)
	if err == nil {
		p.keepFlash(c, fmt.Sprintf("Webhook “%s” created.", w.Name))
		return redirect(c, "/webhooks/"+w.ID.String())
	}
	f := p.form(c, "webhook", "/webhooks", values)
	status, err := formProblems(err, &f, "name", "url", "payloadTemplateType", "secret", "scopes", "events", "headers")
	if err != nil {
		return err
	}
	return p.webhookPage(c, status, nil, f, scopes, events)
}

// webhook shows a webhook's page.
func (p *pages) webhook(c echo.Context) error {
	w, err := p.pathWebhook(c)
	if err != nil {
		return err
	}
	f := p.form(c, "webhook", "/webhooks/"+w.ID.String(), map[string]string{"name": w.Name, "url": w.URL,
		"headers": headerLines(w.Headers), "isActive": strconv.FormatBool(w.IsActive), "payloadTemplateType": w.PayloadTemplateType})
	return p.webhookPage(c, http.StatusOK, &w, f, nil, nil)
}

func headerLines(hs []webhooks.WebhookHeader) string {
	var b strings.Builder
	for _, h := range hs {
		b.WriteString(h.Key + ": " + h.Value + "\n")
	}
	return b.String()
}

// updateWebhook saves a webhook's settings.
func (p *pages) updateWebhook(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	in, values, scopes, events, err := postedWebhook(c)
	if err != nil {
		return err
	}
	w, err := p.store.Webhooks().UpdateWebhook(c.Request().Context(), actor(c), id, in)
	if err == nil {
		p.keepFlash(c, fmt.Sprintf("Webhook “%s” saved.", w.Name))
		return redirect(c, "/webhooks/"+w.ID.String())
	}
	f := p.form(c, "webhook", "/webhooks/"+id.String(), values)
	status, err := formProblems(err, &f, "name", "url", "payloadTemplateType", "secret", "scopes", "events", "headers")
	if err != nil {
		return err
	}
	before, gerr := p.store.Webhooks().GetWebhook(c.Request().Context(), actor(c), id)
	if gerr != nil {
		return gerr
	}
	return p.webhookPage(c, status, &before, f, scopes, events)
}

// testWebhook sends a test delivery, waits for the answer and says how it went.
func (p *pages) testWebhook(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	d, err := p.hooks.SendTest(c.Request().Context(), actor(c), id)
	if err != nil {
		return err
	}
	switch {
	case d.Response != nil && d.Success:
		p.keepFlash(c, fmt.Sprintf("Test delivered: the receiver answered %d %s in %d ms.", d.Response.StatusCode, d.Response.ReasonPhrase, d.LatencyMs))
	case d.Response != nil:
		p.keepProblem(c, fmt.Sprintf("Test failed: the receiver answered %d %s in %d ms.", d.Response.StatusCode, d.Response.ReasonPhrase, d.LatencyMs))
	default:
		p.keepProblem(c, "Test failed: "+d.Error.Message+".")
	}
	return redirect(c, "/webhooks/"+id.String())
}

// confirmDeleteWebhook asks before deleting a webhook, saying what goes with it.
func (p *pages) confirmDeleteWebhook(c echo.Context) error {
	w, err := p.pathWebhook(c)
	if err != nil {
		return err
	}
	href := "/webhooks/" + w.ID.String()
	return p.iamConfirm(c, http.StatusOK, navWebhooks, views.Confirm{
		Crumbs:  []views.Crumb{{Label: "Webhooks", Href: "/webhooks"}, {Label: w.Name, Href: href}},
		Heading: fmt.Sprintf("Delete the webhook “%s”?", w.Name),
		Consequences: []string{
			"It stops receiving events at once; deliveries not yet sent are dropped.",
			"Its delivery log is deleted with it.",
		},
		Action: href + "/delete", Button: "Delete webhook", CancelHref: href,
	})
}

// deleteWebhook deletes a webhook and returns to the list.
func (p *pages) deleteWebhook(c echo.Context) error {
	w, err := p.pathWebhook(c)
	if err != nil {
		return err
	}
	if err := p.store.Webhooks().DeleteWebhook(c.Request().Context(), actor(c), w.ID); err != nil {
		return err
	}
	p.keepFlash(c, fmt.Sprintf("Webhook “%s” deleted.", w.Name))
	return redirect(c, "/webhooks")
}

// pathWebhook reads the webhook the path's id names, as the caller may see it.
func (p *pages) pathWebhook(c echo.Context) (webhooks.Webhook, error) {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return webhooks.Webhook{}, err
	}
	return p.store.Webhooks().GetWebhook(c.Request().Context(), actor(c), id)
}
