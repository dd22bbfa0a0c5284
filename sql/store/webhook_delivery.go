package store

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/describe"
	"github.com/bunting-flags/bunting/web/outbound"
)

// FeatBit's webhook request headers (Domain/Webhooks/WebhookHeaders.cs).
const (
	HeaderWebhookDelivery  = "X-FeatBit-Delivery"
	HeaderWebhookEvent     = "X-FeatBit-Event"
	HeaderWebhookHookID    = "X-FeatBit-Hook-ID"
	HeaderWebhookSignature = "X-FeatBit-Signature-256"
)

// WebhookLogDays is how long the delivery log keeps an attempt.
const WebhookLogDays = 30

// MaxWebhookExcerpt bounds how much of an answer's body is read and kept.
const MaxWebhookExcerpt = 2048

// SignWebhook is FeatBit's signature of a payload: "sha256=" and the hex
// HMAC-SHA256 of the body keyed by the webhook's secret.
func SignWebhook(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// webhookEvents says which FeatBit events a flag or segment change is, as
// FeatBit's WebhookHandler does from its instruction kinds.
func webhookEvents(ch change) []string {
	var out []string
	add := func(yes bool, e string) {
		if yes && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	switch before, after := ch.previous, ch.current; {
	case ch.refType == "FeatureFlag":
		b, _ := before.(*Flag)
		a, _ := after.(*Flag)
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
		add(b.VariationType != a.VariationType || !SameJSON(b.Variations, a.Variations), EventFlagVariationChanged)
		add(b.DisabledVariationID != a.DisabledVariationID, EventFlagOffVariationChanged)
		add(!SameJSON(b.Fallthrough, a.Fallthrough) || b.ExptIncludeAllTargets != a.ExptIncludeAllTargets, EventFlagDefaultRuleChanged)
		add(!SameJSON(b.TargetUsers, a.TargetUsers), EventFlagTargetUsersChanged)
		add(!SameJSON(b.Rules, a.Rules), EventFlagTargetingRulesChanged)
		add(b.Name != a.Name || b.Description != a.Description || !slices.Equal(b.Tags, a.Tags), EventFlagBasicInfoUpdated)
	case ch.refType == "Segment":
		b, _ := before.(*Segment)
		a, _ := after.(*Segment)
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
		add(!SameJSON(b.Rules, a.Rules) || b.Type != a.Type || !slices.Equal(b.Scopes, a.Scopes), EventSegmentRulesChanged)
		add(!slices.Equal(b.Included, a.Included) || !slices.Equal(b.Excluded, a.Excluded), EventSegmentTargetUsersChanged)
		add(b.Name != a.Name || b.Key != a.Key || b.Description != a.Description || !slices.Equal(b.Tags, a.Tags), EventSegmentBasicInfoUpdated)
	}
	return out
}

// queueWebhooks writes, in the change's own transaction, one outbox row
// per active webhook of the organization that subscribes to the change's
// events and whose scopes cover its environment. It is called from audit,
// the one place every flag and segment change passes through, so no change
// on either surface is missed, and the row commits exactly when the change
// does. Sending happens after commit, in the worker.
func (s *Store) queueWebhooks(ctx context.Context, q *db.Queries, a *Actor, ch change) error {
	if a.OrgID == uuid.Nil || (ch.refType != "FeatureFlag" && ch.refType != "Segment") {
		return nil
	}
	events := webhookEvents(ch)
	if len(events) == 0 {
		return nil
	}
	hooks, err := q.ActiveWebhooksForEvents(ctx, db.ActiveWebhooksForEventsParams{OrganizationID: a.OrgID, Events: events})
	if err != nil || len(hooks) == 0 {
		return err
	}
	var res *db.WebhookResourceRow
	if ch.envID != nil && *ch.envID != uuid.Nil {
		r, err := q.WebhookResource(ctx, *ch.envID)
		if err != nil {
			return err
		}
		res = &r
	}
	where, err := s.changedEnvs(ctx, q, a, ch, res)
	if err != nil {
		return err
	}
	var payload []byte
	for _, h := range hooks {
		if !slices.ContainsFunc(where, func(e envRow) bool { return scopesCover(h.Scopes, e.Environment.ProjectID, e.Environment.ID) }) {
			continue
		}
		if payload == nil {
			if payload, err = s.webhookPayload(ctx, q, a, ch, events, res); err != nil {
				return err
			}
		}
		if err := q.InsertWebhookOutbox(ctx, db.InsertWebhookOutboxParams{WebhookID: h.ID,
			Events: strings.Join(events, ","), Payload: string(payload)}); err != nil {
			return err
		}
		s.outboxWrites.Add(1)
	}
	return nil
}

// changedEnvs are the environments a change applies in: its own, or for a
// shared segment every one it is visible in before or after the change.
func (s *Store) changedEnvs(ctx context.Context, q *db.Queries, a *Actor, ch change, res *db.WebhookResourceRow) ([]envRow, error) {
	if res == nil {
		return nil, nil
	}
	var versions []Segment
	for _, v := range []any{ch.previous, ch.current} {
		if sg, ok := v.(*Segment); ok && sg != nil {
			versions = append(versions, *sg)
		}
	}
	own := envRow{db.GetEnvironmentRow{Environment: db.Environment{ID: res.EnvID, ProjectID: res.ProjectID}}}
	if len(versions) == 0 {
		return []envRow{own}, nil
	}
	env, err := q.GetEnvironment(ctx, db.GetEnvironmentParams{OrganizationID: a.OrgID, ID: res.EnvID})
	if err != nil {
		return nil, err
	}
	return visibleEnvs(ctx, q, envRow{env}, versions...)
}

// idName is FeatBit's {id, name} of an organization, project or environment.
type idName struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

// webhookPayload is FeatBit's default data object (DataObjectBuilder):
// events, operator, time, where, the object as it is now (as it was, for a
// deletion) and the change in words.
func (s *Store) webhookPayload(ctx context.Context, q *db.Queries, a *Actor, ch change, events []string, res *db.WebhookResourceRow) ([]byte, error) {
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
	switch ch.refType {
	case "FeatureFlag":
		b, _ := ch.previous.(*Flag)
		f, _ := ch.current.(*Flag)
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
		b, _ := ch.previous.(*Segment)
		sg, _ := ch.current.(*Segment)
		obj["changes"] = orEmpty(describe.SegmentChange(b, sg, noNames))
		if sg == nil {
			sg = b
		}
		rows, err := q.ListFlagsReferencingSegment(ctx, sg.ID)
		if err != nil {
			return nil, err
		}
		refs := make([]map[string]any, len(rows))
		for i, r := range rows {
			refs[i] = map[string]any{"envId": r.EnvID, "id": r.ID, "name": r.Name, "key": r.Key}
		}
		obj["data"] = map[string]any{"kind": "segment", "object": map[string]any{
			"id": sg.ID.String(), "name": sg.Name, "description": sg.Description, "tags": sg.Tags,
			"included": sg.Included, "excluded": sg.Excluded, "rules": sg.Rules,
			"isArchived": boolString(sg.IsArchived), "flagReferences": refs}}
	}
	return json.Marshal(obj)
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
		d.Response = &DeliveryResponse{StatusCode: int(*r.StatusCode), ReasonPhrase: http.StatusText(int(*r.StatusCode)), Body: r.Response}
	}
	if r.Error != "" {
		d.Error = &DeliveryErrorInfo{Message: r.Error}
	}
	return d
}

// attempt is one request to a webhook and how it went.
type attempt struct {
	request   json.RawMessage
	status    *int32
	excerpt   string
	err       string
	started   time.Time
	ended     time.Time
	succeeded bool
}

// send makes one signed request. It never returns an error: a failure is
// part of the attempt, in words safe to show (outbound.Describe).
func send(ctx context.Context, client *http.Client, hookID, deliveryID uuid.UUID, target, secret string, headers []WebhookHeader, events string, payload []byte) attempt {
	at := attempt{started: time.Now()}
	defer func() { at.ended = time.Now() }()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(payload))
	if err != nil {
		at.err = "the URL is not one Bunting can request"
		at.ended = time.Now()
		at.request = recordRequest(target, http.Header{}, payload)
		return at
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "Bunting-Webhook")
	req.Header.Set(HeaderWebhookDelivery, deliveryID.String())
	req.Header.Set(HeaderWebhookEvent, events)
	req.Header.Set(HeaderWebhookHookID, hookID.String())
	if secret != "" {
		req.Header.Set(HeaderWebhookSignature, SignWebhook(secret, payload))
	}
	// The webhook's own headers come last and replace built-in ones, as FeatBit's do.
	for _, h := range headers {
		req.Header.Set(h.Key, h.Value)
	}
	at.request = recordRequest(target, req.Header, payload)
	resp, err := client.Do(req)
	if err != nil {
		at.err = outbound.Describe(target, err)
		at.ended = time.Now()
		return at
	}
	defer resp.Body.Close()
	// Only the excerpt is read: the rest of a large answer is never held.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxWebhookExcerpt))
	code := int32(resp.StatusCode)
	at.status = &code
	// Stored as text: a cut character and NULs (which PostgreSQL text
	// refuses) are dropped.
	at.excerpt = strings.ReplaceAll(strings.ToValidUTF8(string(body), ""), "\x00", "")
	at.succeeded = resp.StatusCode >= 200 && resp.StatusCode < 300
	at.ended = time.Now()
	return at
}

func recordRequest(target string, h http.Header, payload []byte) json.RawMessage {
	headers := map[string]string{}
	for k, v := range h {
		headers[k] = strings.Join(v, "; ")
	}
	raw, _ := json.Marshal(map[string]any{"url": target, "headers": headers, "payload": string(payload)})
	return raw
}

// logAttempt records an attempt in the delivery log and as the webhook's last delivery.
func logAttempt(ctx context.Context, q *db.Queries, hookID, deliveryID uuid.UUID, events string, n int, at attempt) (WebhookDelivery, error) {
	row, err := q.InsertWebhookDelivery(ctx, db.InsertWebhookDeliveryParams{WebhookID: hookID, DeliveryID: deliveryID,
		Events: events, Attempt: int32(n), Success: at.succeeded, StatusCode: at.status,
		LatencyMs: int32(at.ended.Sub(at.started).Milliseconds()), Request: at.request, Response: at.excerpt,
		Error: at.err, StartedAt: at.started, EndedAt: at.ended})
	if err != nil {
		return WebhookDelivery{}, translate(err)
	}
	return deliveryOut(db.WebhookDelivery(row)), nil
}

// WebhookWorkerOptions tune the delivery worker; the zero value is production-ready.
type WebhookWorkerOptions struct {
	// Poll is how often the outbox is looked at when nothing wakes the
	// worker; one second when zero.
	Poll time.Duration
	// Retries are the waits before each attempt after the first; a
	// delivery gets len(Retries)+1 attempts. 10s, 1m, 5m, 30m when nil.
	Retries []time.Duration
	// Timeout bounds one request, answer included; 10 seconds when zero.
	Timeout time.Duration
	// Concurrency is how many deliveries one instance sends at once, so a
	// receiver that hangs holds only its own; 8 when zero.
	Concurrency int
}

// RunWebhooks sends queued deliveries until ctx ends, then waits for the
// requests under way (each bounded by Timeout) and returns. Every instance
// may run it: a delivery is claimed by one of them.
func (s *Store) RunWebhooks(ctx context.Context, o WebhookWorkerOptions) {
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Retries == nil {
		o.Retries = []time.Duration{10 * time.Second, time.Minute, 5 * time.Minute, 30 * time.Minute}
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	client := outbound.NewClient(outbound.Options{AllowPrivate: s.allowPrivateNetworks, Timeout: o.Timeout})
	// A claimed row is not due again for the lease: longer than a request
	// can take, so another instance cannot send it meanwhile.
	lease := o.Timeout + 30*time.Second
	slots := make(chan struct{}, o.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(o.Poll)
	defer tick.Stop()
	var pruned time.Time
	for {
		// The log keeps WebhookLogDays of attempts; any instance may prune.
		if time.Since(pruned) > time.Hour {
			if _, err := s.q.PruneWebhookDeliveries(ctx, time.Now().AddDate(0, 0, -WebhookLogDays)); err != nil && ctx.Err() == nil {
				s.log.Warn("webhooks: pruning the delivery log failed", "err", err)
			}
			pruned = time.Now()
		}
		free := o.Concurrency - len(slots)
		if free > 0 {
			rows, err := s.q.ClaimWebhookOutbox(ctx, db.ClaimWebhookOutboxParams{LeaseUntil: time.Now().Add(lease), Max: int32(free)})
			if err != nil && ctx.Err() == nil {
				s.log.Warn("webhooks: claiming deliveries failed", "err", err)
			}
			for _, row := range rows {
				slots <- struct{}{}
				wg.Add(1)
				go func() {
					defer func() { <-slots; wg.Done() }()
					// Not ctx: a request under way at shutdown finishes
					// (within Timeout) and is recorded.
					s.deliver(context.WithoutCancel(ctx), client, row, o.Retries)
				}()
			}
			if len(rows) == free {
				continue // more may be due
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.outboxKick:
		}
	}
}

// deliver makes one attempt of a claimed outbox row and records it; the
// row is deleted when it succeeded or has no attempt left, and otherwise
// comes due again after the next wait of the schedule.
func (s *Store) deliver(ctx context.Context, client *http.Client, row db.WebhookOutbox, retries []time.Duration) {
	hook, err := s.q.GetWebhookByID(ctx, row.WebhookID)
	if err != nil { // deleted meanwhile: its outbox rows went with it
		return
	}
	if !hook.IsActive { // deactivated since the change: it is sent nothing
		if err := s.q.DeleteWebhookOutbox(ctx, row.ID); err != nil {
			s.log.Warn("webhooks: updating the outbox failed", "webhook", hook.ID, "err", err)
		}
		return
	}
	secret, err := s.webhookSecret(hook)
	if err != nil {
		s.log.Warn("webhooks: the secret does not open with this server key", "webhook", hook.ID)
	}
	var headers []WebhookHeader
	_ = json.Unmarshal(hook.Headers, &headers)
	at := send(ctx, client, hook.ID, row.ID, hook.Url, secret, headers, row.Events, []byte(row.Payload))
	if _, err := logAttempt(ctx, s.q, hook.ID, row.ID, row.Events, int(row.Attempts), at); err != nil {
		s.log.Warn("webhooks: recording a delivery failed", "webhook", hook.ID, "err", err)
	}
	n := int(row.Attempts)
	if at.succeeded || n > len(retries) {
		err = s.q.DeleteWebhookOutbox(ctx, row.ID)
	} else {
		err = s.q.RescheduleWebhookOutbox(ctx, db.RescheduleWebhookOutboxParams{ID: row.ID, DueAt: time.Now().Add(retries[n-1])})
	}
	if err != nil {
		s.log.Warn("webhooks: updating the outbox failed", "webhook", hook.ID, "err", err)
	}
}

// WebhookDeliveryFilter selects a page of a webhook's log (FeatBit's WebhookDeliveryFilter).
type WebhookDeliveryFilter struct {
	Event     string
	Success   *bool
	NotBefore *time.Time
	Page      Page
}

// ListWebhookDeliveries pages a webhook's delivery log, newest first.
func (s *Store) ListWebhookDeliveries(ctx context.Context, a *Actor, id uuid.UUID, f WebhookDeliveryFilter) (Paged[WebhookDelivery], error) {
	var v validator
	f.Page.check(&v)
	v.text("event", f.Event, MaxNameLen)
	v.when("notBefore", f.NotBefore)
	if err := v.err(); err != nil {
		return Paged[WebhookDelivery]{}, err
	}
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return Paged[WebhookDelivery]{}, err
	}
	if _, err := s.q.GetWebhook(ctx, db.GetWebhookParams{OrganizationID: orgID, ID: id}); err != nil {
		return Paged[WebhookDelivery]{}, translate(err)
	}
	rows, err := s.q.ListWebhookDeliveries(ctx, db.ListWebhookDeliveriesParams{WebhookID: id, Event: f.Event,
		Success: f.Success, NotBefore: f.NotBefore, PageSize: f.Page.limit(), PageOffset: f.Page.offset()})
	return paged(rows, err, deliveryOut, func() (int64, error) {
		return s.q.CountWebhookDeliveries(ctx, db.CountWebhookDeliveriesParams{WebhookID: id, Event: f.Event,
			Success: f.Success, NotBefore: f.NotBefore})
	})
}

// WebhookRequest is FeatBit's SendWebhook body: a request to make now.
type WebhookRequest struct {
	ID                   uuid.UUID       `json:"id"`
	DeliveryID           string          `json:"deliveryId"`
	URL                  string          `json:"url"`
	Name                 string          `json:"name"`
	Secret               string          `json:"secret"`
	Headers              []WebhookHeader `json:"headers"`
	Events               string          `json:"events"`
	Payload              string          `json:"payload"`
	PreventEmptyPayloads bool            `json:"preventEmptyPayloads"`
}

// MaxWebhookPayload bounds the payload of a request sent by hand.
const MaxWebhookPayload = 256 << 10

// SendWebhook makes a request now, as FeatBit's "send" does for the
// webhook form's test: it waits for the answer (at most the outbound
// timeout) and says how it went. When id names one of the organization's
// webhooks the attempt goes into its log, and a masked or empty secret
// means the stored one.
func (s *Store) SendWebhook(ctx context.Context, a *Actor, in WebhookRequest) (WebhookDelivery, error) {
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return WebhookDelivery{}, err
	}
	var v validator
	v.required("deliveryId", in.DeliveryID, MaxNameLen)
	if in.URL == "" {
		v.add("url", "required")
	} else if !validWebhookURL(in.URL) {
		v.add("url", "invalid")
	}
	v.required("events", in.Events, 1024)
	if in.Payload == "" {
		v.add("payload", "required")
	} else if len(in.Payload) > MaxWebhookPayload || !json.Valid([]byte(in.Payload)) {
		v.add("payload", "invalid")
	}
	v.text("secret", in.Secret, MaxWebhookSecretLen)
	checkHeaders(&v, in.Headers)
	if err := v.err(); err != nil {
		return WebhookDelivery{}, err
	}
	deliveryID, err := uuid.Parse(in.DeliveryID)
	if err != nil {
		deliveryID = uuid.New()
	}
	var hook *db.Webhook
	if in.ID != uuid.Nil {
		row, err := s.q.GetWebhook(ctx, db.GetWebhookParams{OrganizationID: orgID, ID: in.ID})
		if err != nil {
			return WebhookDelivery{}, translate(err)
		}
		hook = &row
		if stored, err := s.webhookSecret(row); err == nil && (in.Secret == "" || in.Secret == maskSecret(stored)) {
			in.Secret = stored
		}
	}
	if in.PreventEmptyPayloads && strings.TrimSpace(strings.Join(strings.Fields(in.Payload), "")) == "{}" {
		return WebhookDelivery{WebhookID: in.ID, Error: &DeliveryErrorInfo{Message: "Not allowed to send an empty JSON object"},
			Request: recordRequest(in.URL, http.Header{}, []byte(in.Payload))}, nil
	}
	at := send(ctx, s.sendClient(), in.ID, deliveryID, in.URL, in.Secret, in.Headers, in.Events, []byte(in.Payload))
	if hook == nil {
		d := deliveryOut(db.WebhookDelivery{DeliveryID: deliveryID, Events: in.Events, Attempt: 1, Success: at.succeeded,
			StatusCode: at.status, LatencyMs: int32(at.ended.Sub(at.started).Milliseconds()), Request: at.request,
			Response: at.excerpt, Error: at.err, StartedAt: at.started, EndedAt: at.ended})
		return d, nil
	}
	return logAttempt(ctx, s.q, hook.ID, deliveryID, in.Events, 1, at)
}

// sendClient is the outbound client of requests sent by hand, made once so
// its connections are reused.
func (s *Store) sendClient() *http.Client {
	s.sendClientOnce.Do(func() {
		s.sendHTTP = outbound.NewClient(outbound.Options{AllowPrivate: s.allowPrivateNetworks})
	})
	return s.sendHTTP
}

// SendWebhookTest sends a webhook a test delivery ("Send test" on its
// page): FeatBit's data object with the event "test", signed and logged
// like any delivery, and waits for the answer.
func (s *Store) SendWebhookTest(ctx context.Context, a *Actor, id uuid.UUID) (WebhookDelivery, error) {
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return WebhookDelivery{}, err
	}
	row, err := s.q.GetWebhook(ctx, db.GetWebhookParams{OrganizationID: orgID, ID: id})
	if err != nil {
		return WebhookDelivery{}, translate(err)
	}
	org, err := s.q.GetOrganization(ctx, orgID)
	if err != nil {
		return WebhookDelivery{}, translate(err)
	}
	payload, err := json.Marshal(map[string]any{"events": EventTest, "operator": operatorName(ctx, s.q, a),
		"happenedAt": time.Now().UTC(), "organization": idName{org.ID, org.Name},
		"data":    map[string]any{"kind": "test", "object": map[string]any{"webhook": idName{row.ID, row.Name}}},
		"changes": []string{"A test delivery from Bunting"}})
	if err != nil {
		return WebhookDelivery{}, err
	}
	secret, _ := s.webhookSecret(row)
	return s.SendWebhook(ctx, a, WebhookRequest{ID: row.ID, DeliveryID: uuid.NewString(), URL: row.Url, Secret: secret,
		Headers: headersOf(row), Events: EventTest, Payload: string(payload)})
}

func headersOf(row db.Webhook) []WebhookHeader {
	var h []WebhookHeader
	_ = json.Unmarshal(row.Headers, &h)
	return h
}

// operatorName is FeatBit's "operator" of a payload: who made the change.
func operatorName(ctx context.Context, q *db.Queries, a *Actor) string {
	if a.IsToken() {
		return "access token"
	}
	if a.TriggerID != uuid.Nil { // a flag trigger's URL was called
		t, err := q.GetTriggerInOrganization(ctx, db.GetTriggerInOrganizationParams{OrganizationID: a.OrgID, ID: a.TriggerID})
		if err != nil {
			return "trigger"
		}
		return triggerName(t.FlagTrigger)
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
