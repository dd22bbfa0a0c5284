package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/webhooks"
)

// A webhook made with FeatBit's request shapes is listed, renamed, checked
// by name, tested and deleted; its secret is never shown again.
func TestWebhookRoutes(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	p := decode[core.Project](t, s.do("POST", "/api/v1/projects", s.owner, map[string]string{"name": "Web", "key": "web"}).ok(t))
	env := p.Environments[0]
	scope := p.ID.String() + "/" + env.ID.String()
	// FeatBit's CreateWebhook, as its UI sends it.
	body := map[string]any{"name": "Deploys", "scopes": []string{scope}, "url": "https://hooks.example.com/bunting",
		"events":              []string{"feature_flag.toggled", "segment.created"},
		"headers":             []map[string]string{{"key": "X-Team", "value": "payments"}},
		"payloadTemplateType": "default", "payloadTemplate": "{{{json this}}}", "secret": "a-long-random-secret",
		"isActive": true, "preventEmptyPayloads": false}
	w := decode[webhooks.Webhook](t, s.do("POST", "/api/v1/webhooks", s.owner, body).ok(t))
	// Not even part of the secret or of a header's value is shown.
	if w.Secret != "********" || !w.HasSecret || w.Headers[0].Key != "X-Team" || w.Headers[0].Value != "********" ||
		len(w.ScopeNames) != 1 || w.ScopeNames[0] != "Web/"+env.Name {
		t.Fatalf("created %+v", w)
	}
	s.do("POST", "/api/v1/webhooks", s.owner, body).fails(t, http.StatusUnprocessableEntity, "NameHasBeenUsed")
	bad := map[string]any{"name": "x", "scopes": []string{"nope"}, "url": "file:///etc/passwd", "events": []string{"flag.gone"}}
	s.do("POST", "/api/v1/webhooks", s.owner, bad).fails(t, http.StatusBadRequest, "url_is_invalid", "scopes_is_invalid", "events_is_invalid")

	used := decode[bool](t, s.do("GET", "/api/v1/webhooks/is-name-used?name=deploys", s.owner, nil).ok(t))
	if !used {
		t.Fatal("is-name-used: false for a used name")
	}
	page := decode[core.Paged[webhooks.Webhook]](t, s.do("GET", "/api/v1/webhooks?pageIndex=0&pageSize=10&name=dep&envId="+env.ID.String(), s.owner, nil).ok(t))
	if page.TotalCount != 1 || page.Items[0].ID != w.ID {
		t.Fatalf("list %+v", page)
	}

	// FeatBit's UpdateWebhook sends the whole webhook back, the masked secret and headers included.
	body["name"], body["secret"], body["isActive"], body["headers"] = "Deploys 2", w.Secret, false, w.Headers
	u := decode[webhooks.Webhook](t, s.do("PUT", "/api/v1/webhooks/"+w.ID.String(), s.owner, body).ok(t))
	if u.Name != "Deploys 2" || u.IsActive || u.Secret != w.Secret {
		t.Fatalf("updated %+v", u)
	}
	if n := s.count(`SELECT count(*) FROM webhooks WHERE headers = '[{"key": "X-Team", "value": "payments"}]'`); n != 1 {
		t.Fatal("the header's value did not survive an update that sent it back masked")
	}

	// FeatBit's SendWebhook: here loopback is not allowed, which the answer says.
	d := decode[webhooks.WebhookDelivery](t, s.do("POST", "/api/v1/webhooks/send", s.owner, map[string]any{
		"id": w.ID, "deliveryId": "3b7f0c58-8f2c-4a8e-9d55-9e1f0f6c0a11", "url": "http://127.0.0.1:9/hook", "name": "Deploys 2",
		"secret": "", "headers": []any{}, "events": "feature_flag.toggled", "payload": `{"events":"feature_flag.toggled"}`,
		"preventEmptyPayloads": false}).ok(t))
	if d.Success || d.Error == nil || !strings.Contains(d.Error.Message, "not allowed") {
		t.Fatalf("send %+v", d)
	}
	s.do("POST", "/api/v1/webhooks/send", s.owner, map[string]any{"deliveryId": "x", "url": "https://h.example.com",
		"events": "e", "payload": "{not json"}).fails(t, http.StatusBadRequest, "payload_is_invalid")
	log := decode[core.Paged[webhooks.WebhookDelivery]](t, s.do("GET", "/api/v1/webhooks/"+w.ID.String()+"/deliveries?success=false", s.owner, nil).ok(t))
	if log.TotalCount != 1 || log.Items[0].Events != "feature_flag.toggled" {
		t.Fatalf("deliveries %+v", log)
	}

	// A developer may change flags but not see or change webhooks.
	dev, _ := s.addMember("dev@example.com", core.DeveloperPolicyID)
	s.do("GET", "/api/v1/webhooks", dev, nil).fails(t, http.StatusForbidden, "Forbidden")

	// A change in the scope queues a delivery in its own transaction, for
	// active webhooks only.
	u = decode[webhooks.Webhook](t, s.do("PUT", "/api/v1/webhooks/"+w.ID.String(), s.owner, map[string]any{
		"name": "Deploys 2", "scopes": []string{scope}, "url": w.URL, "events": w.Events, "isActive": true}).ok(t))
	flags := "/api/v1/envs/" + env.ID.String() + "/feature-flags"
	s.do("POST", flags, dev, map[string]any{"name": "Pay", "key": "pay"}).ok(t)
	s.do("PUT", flags+"/pay/toggle/true", dev, nil).ok(t)
	if n := s.count(`SELECT count(*) FROM webhook_outbox WHERE webhook_id = $1 AND events = 'feature_flag.toggled'`, w.ID); n != 1 {
		t.Fatalf("%d deliveries queued for the toggle, want 1", n)
	}

	s.do("DELETE", "/api/v1/webhooks/"+w.ID.String(), s.owner, nil).ok(t)
	s.do("GET", "/api/v1/webhooks/"+w.ID.String(), s.owner, nil).fails(t, http.StatusNotFound, "ResourceNotFound")
	if n := s.count(`SELECT count(*) FROM webhook_outbox`); n != 0 {
		t.Fatalf("%d deliveries left of a deleted webhook", n)
	}
}

// Making a webhook and reading its log need reading the environments it is
// about (FeatBit checks neither): a member who may manage webhooks but not
// read Prod is refused both for Prod, and keeps them for Dev.
func TestWebhookRoutesNeedTheirEnvironments(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	p := decode[core.Project](t, s.do("POST", "/api/v1/projects", s.owner, map[string]string{"name": "Web", "key": "web"}).ok(t))
	prod, dev := p.Environments[0], p.Environments[1]
	policy := s.policyFor("dev-webhooks", []access.Statement{
		{ID: "o", ResourceType: access.TypeOrganization, Effect: "allow", Actions: []string{string(core.WebhookAction)}, Resources: []string{"organization/*"}},
		{ID: "e", ResourceType: access.TypeEnv, Effect: "allow", Actions: []string{string(access.CanAccessEnv)}, Resources: []string{"project/web:env/" + dev.Key}},
	})
	member, _ := s.addMember("hooks@example.com", policy)
	hook := func(env core.Environment) map[string]any {
		return map[string]any{"name": "To " + env.Name, "url": "https://hooks.example.com/x", "isActive": true,
			"scopes": []string{p.ID.String() + "/" + env.ID.String()}, "events": []string{"feature_flag.toggled"}}
	}
	s.do("POST", "/api/v1/webhooks", member, hook(prod)).fails(t, http.StatusForbidden, "Forbidden")
	mine := decode[webhooks.Webhook](t, s.do("POST", "/api/v1/webhooks", member, hook(dev)).ok(t))
	s.do("GET", "/api/v1/webhooks/"+mine.ID.String()+"/deliveries", member, nil).ok(t)
	owners := decode[webhooks.Webhook](t, s.do("POST", "/api/v1/webhooks", s.owner, hook(prod)).ok(t))
	s.do("GET", "/api/v1/webhooks/"+owners.ID.String()+"/deliveries", member, nil).fails(t, http.StatusForbidden, "Forbidden")
	s.do("PUT", "/api/v1/webhooks/"+owners.ID.String(), member, hook(prod)).fails(t, http.StatusForbidden, "Forbidden")
	s.do("GET", "/api/v1/webhooks/"+owners.ID.String()+"/deliveries", s.owner, nil).ok(t)
}
