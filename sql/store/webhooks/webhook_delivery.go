package webhooks

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/describe"
	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/governance"
)

// WebhookLogDays is how long the delivery log keeps an attempt.
const WebhookLogDays = 30

// webhookEvents says which FeatBit events a flag or segment change is, as
// FeatBit's WebhookHandler does from its instruction kinds.
func webhookEvents(ch core.Change) []string {
	var out []string
	add := func(yes bool, e string) {
		if yes && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	switch before, after := ch.Previous, ch.Current; {
	case ch.RefType == "FeatureFlag":
		b, _ := before.(*flagstore.Flag)
		a, _ := after.(*flagstore.Flag)
		switch {
		case b == nil && a != nil:
			return []string{EventFlagCreated}
		case a == nil && b != nil:
			return []string{EventFlagDeleted}
		case a == nil:
			return nil
		}
		add(!b.IsArchived && a.IsArchived, EventFlagArchived)
		add(b.IsArchived && !a.IsArchived, EventFlagRestored)
		add(b.IsEnabled != a.IsEnabled, EventFlagToggled)
		add(b.VariationType != a.VariationType || !flagstore.SameJSON(b.Variations, a.Variations), EventFlagVariationChanged)
		add(b.DisabledVariationID != a.DisabledVariationID, EventFlagOffVariationChanged)
		add(!flagstore.SameJSON(b.Fallthrough, a.Fallthrough) || b.ExptIncludeAllTargets != a.ExptIncludeAllTargets, EventFlagDefaultRuleChanged)
		add(!flagstore.SameJSON(b.TargetUsers, a.TargetUsers), EventFlagTargetUsersChanged)
		add(!flagstore.SameJSON(b.Rules, a.Rules), EventFlagTargetingRulesChanged)
		add(b.Name != a.Name || b.Description != a.Description || !slices.Equal(b.Tags, a.Tags), EventFlagBasicInfoUpdated)
	case ch.RefType == "Segment":
		b, _ := before.(*flagstore.Segment)
		a, _ := after.(*flagstore.Segment)
		switch {
		case b == nil && a != nil:
			return []string{EventSegmentCreated}
		case a == nil && b != nil:
			return []string{EventSegmentDeleted}
		case a == nil:
			return nil
		}
		add(!b.IsArchived && a.IsArchived, EventSegmentArchived)
		add(b.IsArchived && !a.IsArchived, EventSegmentRestored)
		add(!flagstore.SameJSON(b.Rules, a.Rules) || b.Type != a.Type || !slices.Equal(b.Scopes, a.Scopes), EventSegmentRulesChanged)
		add(!slices.Equal(b.Included, a.Included) || !slices.Equal(b.Excluded, a.Excluded), EventSegmentTargetUsersChanged)
		add(b.Name != a.Name || b.Key != a.Key || b.Description != a.Description || !slices.Equal(b.Tags, a.Tags), EventSegmentBasicInfoUpdated)
	}
	return out
}

// ChangeWebhookEvents are the webhook events of a change made by a: none
// for a change outside an organization or of something other than a flag
// or a segment, which no webhook hears of.
func ChangeWebhookEvents(a *core.Actor, ch core.Change) []string {
	switch {
	case a.OrgID == uuid.Nil:
		return nil
	case ch.RefType == "FlagChangeRequest":
		return changeRequestEvents(ch)
	case ch.RefType != "FeatureFlag" && ch.RefType != "Segment":
		return nil
	}
	return webhookEvents(ch)
}

// QueueWebhooks writes, in the change's own transaction, one outbox row
// per active webhook of the organization that subscribes to the change's
// events (ChangeWebhookEvents) and whose scopes cover its environment. It
// is called from audit and recordFlag, which every flag and segment change
// passes through, so no change on either surface is missed, and the row
// commits exactly when the change does; they call it only when the
// statement that wrote the audit entry found such a webhook. Sending
// happens after commit, in the worker.
func (s *Webhooks) QueueWebhooks(ctx context.Context, q *db.Queries, a *core.Actor, ch core.Change, events []string) error {
	if len(events) == 0 {
		return nil
	}
	hooks, err := q.ActiveWebhooksForEvents(ctx, db.ActiveWebhooksForEventsParams{OrganizationID: a.OrgID, Events: events})
	if err != nil || len(hooks) == 0 {
		return err
	}
	var res *db.WebhookResourceRow
	if ch.EnvID != nil && *ch.EnvID != uuid.Nil {
		r, err := q.WebhookResource(ctx, *ch.EnvID)
		if err != nil {
			return err
		}
		res = &r
	}
	where, err := s.changedEnvs(ctx, q, a, ch, res)
	if err != nil {
		return err
	}
	var trace *string
	if tp := feed.TraceParent(ctx); tp != "" {
		trace = &tp
	}
	var p *payload
	var slack []byte
	for _, h := range hooks {
		// The environments of the change this webhook's scopes reach: what
		// its log is about, and where the flags its payload names may be.
		covered := map[uuid.UUID]bool{}
		envIDs := []uuid.UUID{}
		for _, e := range where {
			if scopesCover(h.Scopes, e.Environment.ProjectID, e.Environment.ID) {
				covered[e.Environment.ID] = true
				envIDs = append(envIDs, e.Environment.ID)
			}
		}
		if len(envIDs) == 0 {
			continue
		}
		var body []byte
		if h.PayloadTemplateType == PayloadSlack {
			if slack == nil {
				if slack, err = s.slackBody(ctx, q, a, ch, res); err != nil {
					return err
				}
			}
			body = slack
		} else {
			if p == nil {
				if p, err = s.webhookPayload(ctx, q, a, ch, events, res); err != nil {
					return err
				}
			}
			if body, err = p.within(covered); err != nil {
				return err
			}
		}
		if err := q.InsertWebhookOutbox(ctx, db.InsertWebhookOutboxParams{WebhookID: h.ID,
			Events: strings.Join(events, ","), Payload: string(body), EnvIds: envIDs, Trace: trace}); err != nil {
			return err
		}
		s.core.OutboxWrites.Add(1)
	}
	return nil
}

// changedEnvs are the environments a change applies in: its own, or for a
// shared segment every one it is visible in before or after the change.
func (s *Webhooks) changedEnvs(ctx context.Context, q *db.Queries, a *core.Actor, ch core.Change, res *db.WebhookResourceRow) ([]core.EnvRow, error) {
	if res == nil {
		return nil, nil
	}
	var versions []flagstore.Segment
	for _, v := range []any{ch.Previous, ch.Current} {
		if sg, ok := v.(*flagstore.Segment); ok && sg != nil {
			versions = append(versions, *sg)
		}
	}
	own := core.EnvRow{GetEnvironmentRow: db.GetEnvironmentRow{Environment: db.Environment{ID: res.EnvID, ProjectID: res.ProjectID}}}
	if len(versions) == 0 {
		return []core.EnvRow{own}, nil
	}
	env, err := q.GetEnvironment(ctx, db.GetEnvironmentParams{OrganizationID: a.OrgID, ID: res.EnvID})
	if err != nil {
		return nil, err
	}
	return flagstore.VisibleEnvs(ctx, q, core.EnvRow{GetEnvironmentRow: env}, versions...)
}

// idName is FeatBit's {id, name} of an organization, project or environment.
type idName struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

// payload is a change's webhook payload before it is sent to one webhook.
type payload struct {
	obj map[string]any
	// segment is a segment's object, whose flagReferences each webhook is
	// told only where its scopes reach: refs are all of them.
	segment map[string]any
	refs    []flagRef
	// body is the payload marshaled once, when it is the same for every webhook.
	body []byte
}

// flagRef is a flag that uses a segment, as the payload names it.
type flagRef struct {
	EnvID uuid.UUID `json:"envId"`
	ID    uuid.UUID `json:"id"`
	Name  string    `json:"name"`
	Key   string    `json:"key"`
}

// within is the payload for a webhook whose scopes cover the environments
// given: a shared segment's flags elsewhere are not its author's to read.
func (p *payload) within(covered map[uuid.UUID]bool) ([]byte, error) {
	if p.segment == nil {
		if p.body == nil {
			var err error
			if p.body, err = json.Marshal(p.obj); err != nil {
				return nil, err
			}
		}
		return p.body, nil
	}
	refs := []flagRef{}
	for _, r := range p.refs {
		if covered[r.EnvID] {
			refs = append(refs, r)
		}
	}
	p.segment["flagReferences"] = refs
	return json.Marshal(p.obj)
}

// webhookPayload is FeatBit's default data object (DataObjectBuilder):
// events, operator, time, where, the object as it is now (as it was, for a
// deletion) and the change in words.
func (s *Webhooks) webhookPayload(ctx context.Context, q *db.Queries, a *core.Actor, ch core.Change, events []string, res *db.WebhookResourceRow) (*payload, error) {
	obj := map[string]any{
		"events":     strings.Join(events, ","),
		"operator":   operatorName(ctx, q, a),
		"happenedAt": time.Now().UTC(),
	}
	if res != nil {
		obj["organization"] = idName{res.OrganizationID, res.OrganizationName}
		obj["project"] = idName{res.ProjectID, res.ProjectName}
		obj["environment"] = idName{res.EnvID, res.EnvName}
	} else if org, err := q.GetOrganization(ctx, a.OrgID); err == nil {
		obj["organization"] = idName{org.ID, org.Name}
	}
	noNames := func(string) (string, bool) { return "", false }
	boolString := func(b bool) string {
		if b {
			return "true"
		}
		return "false"
	}
	switch ch.RefType {
	case "FeatureFlag":
		b, _ := ch.Previous.(*flagstore.Flag)
		f, _ := ch.Current.(*flagstore.Flag)
		obj["changes"] = orEmpty(describe.FlagChange(b, f, noNames))
		if f == nil {
			f = b
		}
		obj["data"] = map[string]any{"kind": "feature flag", "object": map[string]any{
			"id": f.ID.String(), "name": f.Name, "description": f.Description, "key": f.Key,
			"variationType": f.VariationType, "variations": f.Variations, "targetUsers": f.TargetUsers,
			"rules": f.Rules, "isEnabled": boolString(f.IsEnabled), "disabledVariationId": f.DisabledVariationID,
			"fallthrough": f.Fallthrough, "exptIncludeAllTargets": boolString(f.ExptIncludeAllTargets),
			"tags": f.Tags, "isArchived": boolString(f.IsArchived)}}
	case "Segment":
		b, _ := ch.Previous.(*flagstore.Segment)
		sg, _ := ch.Current.(*flagstore.Segment)
		obj["changes"] = orEmpty(describe.SegmentChange(b, sg, noNames))
		if sg == nil {
			sg = b
		}
		rows, err := q.ListFlagsReferencingSegment(ctx, sg.ID)
		if err != nil {
			return nil, err
		}
		p := &payload{obj: obj, segment: map[string]any{
			"id": sg.ID.String(), "name": sg.Name, "description": sg.Description, "tags": sg.Tags,
			"included": sg.Included, "excluded": sg.Excluded, "rules": sg.Rules,
			"isArchived": boolString(sg.IsArchived)}}
		for _, r := range rows {
			p.refs = append(p.refs, flagRef{r.EnvID, r.ID, r.Name, r.Key})
		}
		obj["data"] = map[string]any{"kind": "segment", "object": p.segment}
		return p, nil
	case "FlagChangeRequest":
		// Not FeatBit's (it has no such events): the request's step, as
		// its audit record says it.
		r, _ := ch.Current.(*flagstore.ChangeRequestRecord)
		if r == nil {
			r, _ = ch.Previous.(*flagstore.ChangeRequestRecord)
		}
		if r != nil {
			obj["changes"] = []string{}
			obj["data"] = map[string]any{"kind": "change request", "object": map[string]any{
				"id": ch.RefID, "flagKey": r.Flag, "reason": r.Reason, "status": r.Status, "reviews": orEmpty(r.Reviews)}}
		}
	}
	return &payload{obj: obj}, nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// WebhookDelivery is one attempt in a webhook's delivery log (FeatBit's
// WebhookDelivery), with what was sent, the answer's status and the first
// bytes of its body, and how long it took.
type WebhookDelivery struct {
	ID         uuid.UUID          `json:"id"`
	WebhookID  uuid.UUID          `json:"webhookId"`
	DeliveryID uuid.UUID          `json:"deliveryId"`
	Success    bool               `json:"success"`
	Events     string             `json:"events"`
	Attempt    int                `json:"attempt"`
	Request    json.RawMessage    `json:"request"`
	Response   *DeliveryResponse  `json:"response"`
	Error      *DeliveryErrorInfo `json:"error"`
	LatencyMs  int                `json:"latencyMs"`
	StartedAt  time.Time          `json:"startedAt"`
	EndedAt    time.Time          `json:"endedAt"`
}

// DeliveryResponse is what the receiver answered; Body is an excerpt.
type DeliveryResponse struct {
	StatusCode   int    `json:"statusCode"`
	ReasonPhrase string `json:"reasonPhrase"`
	Body         string `json:"body"`
}

// DeliveryErrorInfo says why a delivery failed without an answer.
type DeliveryErrorInfo struct {
	Message string `json:"message"`
}

func deliveryOut(r db.WebhookDelivery) WebhookDelivery {
	d := WebhookDelivery{ID: r.ID, WebhookID: r.WebhookID, DeliveryID: r.DeliveryID, Success: r.Success, Events: r.Events,
		Attempt: int(r.Attempt), Request: r.Request, LatencyMs: int(r.LatencyMs), StartedAt: r.StartedAt, EndedAt: r.EndedAt}
	if r.StatusCode != nil {
		d.Response = &DeliveryResponse{StatusCode: int(*r.StatusCode), ReasonPhrase: r.ReasonPhrase, Body: r.Response}
	}
	if r.Error != "" {
		d.Error = &DeliveryErrorInfo{Message: r.Error}
	}
	return d
}

// operatorName is FeatBit's "operator" of a payload: who made the change.
func operatorName(ctx context.Context, q *db.Queries, a *core.Actor) string {
	if a.IsToken() {
		return "access token"
	}
	if a.TriggerID != uuid.Nil { // a flag trigger's URL was called
		t, err := q.GetTriggerInOrganization(ctx, db.GetTriggerInOrganizationParams{OrganizationID: a.OrgID, ID: a.TriggerID})
		if err != nil {
			return "trigger"
		}
		return governance.TriggerName(t.FlagTrigger)
	}
	u, err := q.GetUser(ctx, a.UserID)
	if err != nil {
		return ""
	}
	if u.Name != "" {
		return u.Name
	}
	return u.Email
}

// WebhookDeliveryFilter selects a page of a webhook's log (FeatBit's WebhookDeliveryFilter).
type WebhookDeliveryFilter struct {
	Event     string
	Success   *bool
	NotBefore *time.Time
	Page      core.Page
}

// ListWebhookDeliveries pages a webhook's delivery log, newest first. The
// log holds what changed in the webhook's environments, so reading it needs
// CanAccessEnv on each environment its scopes name and on each one its
// entries are about (scopes may have been narrowed since): a caller lacking
// any is refused the whole log rather than shown part of it, which would
// say by its gaps what it leaves out.
func (s *Webhooks) ListWebhookDeliveries(ctx context.Context, a *core.Actor, id uuid.UUID, f WebhookDeliveryFilter) (core.Paged[WebhookDelivery], error) {
	var v core.Validator
	f.Page.Check(&v)
	v.Text("event", f.Event, core.MaxNameLen)
	v.When("notBefore", f.NotBefore)
	if err := v.Err(); err != nil {
		return core.Paged[WebhookDelivery]{}, err
	}
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return core.Paged[WebhookDelivery]{}, err
	}
	hook, err := s.core.Q.GetWebhook(ctx, db.GetWebhookParams{OrganizationID: orgID, ID: id})
	if err != nil {
		return core.Paged[WebhookDelivery]{}, core.Translate(err)
	}
	envs, err := s.orgEnvs(ctx, s.core.Q, orgID)
	if err != nil {
		return core.Paged[WebhookDelivery]{}, err
	}
	logged, err := s.core.Q.WebhookLogEnvironments(ctx, id)
	if err != nil {
		return core.Paged[WebhookDelivery]{}, core.Translate(err)
	}
	if err := envs.requireScopes(a, hook.Scopes, logged...); err != nil {
		return core.Paged[WebhookDelivery]{}, err
	}
	rows, err := s.core.Q.ListWebhookDeliveries(ctx, db.ListWebhookDeliveriesParams{WebhookID: id, Event: f.Event,
		Success: f.Success, NotBefore: f.NotBefore, PageSize: f.Page.Limit(), PageOffset: f.Page.Offset()})
	return core.PageOf(rows, err, deliveryOut, func() (int64, error) {
		return s.core.Q.CountWebhookDeliveries(ctx, db.CountWebhookDeliveriesParams{WebhookID: id, Event: f.Event,
			Success: f.Success, NotBefore: f.NotBefore})
	})
}
