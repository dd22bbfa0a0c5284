package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/net/http/httpguts"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/reach"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// FeatBit's webhook events (Domain/Webhooks/WebhookEvents.cs).
const (
	EventFlagCreated               = "feature_flag.created"
	EventFlagToggled               = "feature_flag.toggled"
	EventFlagArchived              = "feature_flag.archived"
	EventFlagRestored              = "feature_flag.restored"
	EventFlagVariationChanged      = "feature_flag.variation_changed"
	EventFlagOffVariationChanged   = "feature_flag.off_variation_changed"
	EventFlagDefaultRuleChanged    = "feature_flag.default_rule_changed"
	EventFlagTargetUsersChanged    = "feature_flag.target_users_changed"
	EventFlagTargetingRulesChanged = "feature_flag.targeting_rules_changed"
	EventFlagBasicInfoUpdated      = "feature_flag.basic_info_updated"
	EventFlagDeleted               = "feature_flag.deleted"

	EventSegmentCreated            = "segment.created"
	EventSegmentArchived           = "segment.archived"
	EventSegmentRestored           = "segment.restored"
	EventSegmentRulesChanged       = "segment.rules_changed"
	EventSegmentTargetUsersChanged = "segment.target_users_changed"
	EventSegmentBasicInfoUpdated   = "segment.basic_info_updated"
	EventSegmentDeleted            = "segment.deleted"

	// EventTest is what a test delivery ("Send test") says it is.
	EventTest = "test"
)

// WebhookEvents lists every event a webhook can subscribe to, in FeatBit's order.
var WebhookEvents = []string{
	EventFlagCreated, EventFlagToggled, EventFlagArchived, EventFlagRestored, EventFlagVariationChanged,
	EventFlagOffVariationChanged, EventFlagDefaultRuleChanged, EventFlagTargetUsersChanged,
	EventFlagTargetingRulesChanged, EventFlagBasicInfoUpdated, EventFlagDeleted,
	EventSegmentCreated, EventSegmentArchived, EventSegmentRestored, EventSegmentRulesChanged,
	EventSegmentTargetUsersChanged, EventSegmentBasicInfoUpdated, EventSegmentDeleted,
	flagstore.EventChangeRequestCreated, flagstore.EventChangeRequestApproved, flagstore.EventChangeRequestDeclined, flagstore.EventChangeRequestApplied,
}

// Webhook payload template types; Bunting sends FeatBit's default data
// object, or a Slack incoming webhook's {"text": ...} (webhook_slack.go),
// and does not render custom (Handlebars) templates.
const (
	PayloadDefault = "default"
	PayloadCustom  = "custom"
	PayloadSlack   = "slack"
)

// Webhook bounds.
const (
	MaxWebhookURLLen    = 2048
	MaxWebhookHeaders   = 20
	MaxWebhookHeaderLen = 1024
	MaxWebhookSecretLen = 256
	MaxWebhookScopes    = 100
	MaxWebhookTemplate  = 64 << 10
	// MaxWebhooksPerOrg bounds an organization's webhooks: each one is
	// matched against every flag and segment change, and queues a delivery
	// the worker sends, so their number is work every change costs.
	MaxWebhooksPerOrg = 100
)

// ErrTooManyWebhooks refuses a webhook past MaxWebhooksPerOrg.
var ErrTooManyWebhooks = &core.RuleError{Code: "TooManyWebhooks"}

// SecretMask stands for a stored secret or header value in what Bunting
// shows: the value itself is only ever sent, never shown again, not even
// in part. Given back on update (or to "send" for the webhook's own URL) it
// means the stored value, so it is refused as a new value.
const SecretMask = "********"

// WebhookHeader is one header a webhook adds to its requests, shaped as
// .NET serializes FeatBit's KeyValuePair<string, string>.
type WebhookHeader struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// LastDelivery is how a webhook's latest attempt went (FeatBit's LastDelivery).
type LastDelivery struct {
	Success    bool      `json:"success"`
	HappenedAt time.Time `json:"happenedAt"`
	Response   *int      `json:"response"`
}

// Webhook is FeatBit's WebhookVm. Secret and the headers' values are
// SecretMask when set (HasSecret says whether a secret is): the values
// themselves are only ever sent, never shown again after they are saved.
type Webhook struct {
	ID                   uuid.UUID          `json:"id"`
	Name                 string             `json:"name"`
	URL                  string             `json:"url"`
	Scopes               []string           `json:"scopes"`
	ScopeNames           []string           `json:"scopeNames"`
	Events               []string           `json:"events"`
	Headers              []WebhookHeader    `json:"headers"`
	PayloadTemplateType  string             `json:"payloadTemplateType"`
	PayloadTemplate      string             `json:"payloadTemplate"`
	Secret               string             `json:"secret"`
	HasSecret            bool               `json:"hasSecret"`
	IsActive             bool               `json:"isActive"`
	PreventEmptyPayloads bool               `json:"preventEmptyPayloads"`
	LastDelivery         *LastDelivery      `json:"lastDelivery"`
	Creator              *core.TokenCreator `json:"creator"`
	CreatedAt            time.Time          `json:"createdAt"`
	UpdatedAt            time.Time          `json:"updatedAt"`
	// Undeliverable, when set, says why no delivery to the URL can be
	// made from this server (a loopback or private address while
	// BUNTING_WEBHOOK_ALLOW_PRIVATE_NETWORKS is off, a link-local or
	// metadata address); FeatBit has no such field. The webhook is kept:
	// the setting may change, and a name's address is known only when a
	// delivery dials it, so each delivery is checked again then.
	Undeliverable string `json:"undeliverable,omitempty"`
}

// WebhookInput creates or replaces a webhook (FeatBit's WebhookBase). A nil
// Secret on update keeps the stored one, as does SecretMask, which the
// webhook was shown with and FeatBit's UI sends back; "" removes it
// (deliveries go unsigned). A header whose value is SecretMask keeps the
// stored value of that header.
type WebhookInput struct {
	Name                 string          `json:"name"`
	Scopes               []string        `json:"scopes"`
	URL                  string          `json:"url"`
	Events               []string        `json:"events"`
	Headers              []WebhookHeader `json:"headers"`
	PayloadTemplateType  string          `json:"payloadTemplateType"`
	PayloadTemplate      string          `json:"payloadTemplate"`
	Secret               *string         `json:"secret"`
	IsActive             bool            `json:"isActive"`
	PreventEmptyPayloads bool            `json:"preventEmptyPayloads"`
}

// WebhookFilter selects a page of webhooks (FeatBit's WebhookFilter).
type WebhookFilter struct {
	Name      string
	ProjectID string
	EnvID     string
	Page      core.Page
}

// webhookOrg checks that a person may manage the organization's webhooks
// and returns the organization.
func (s *Webhooks) webhookOrg(ctx context.Context, a *core.Actor) (uuid.UUID, error) {
	orgID, err := a.Org()
	if err != nil {
		return uuid.Nil, err
	}
	row, err := s.core.Q.GetOrganization(ctx, orgID)
	if err != nil {
		return uuid.Nil, core.Translate(err)
	}
	return orgID, a.Require(core.WebhookAction, core.OrganizationRN(row.Key))
}

// MayManageWebhooks tells the pages whether to show the webhooks.
func (s *Webhooks) MayManageWebhooks(ctx context.Context, a *core.Actor) bool {
	_, err := s.webhookOrg(ctx, a)
	return err == nil
}

// MaskSecret shows that a value is set without showing any of it.
func MaskSecret(secret string) string {
	if secret == "" {
		return ""
	}
	return SecretMask
}

// maskHeaders shows a webhook's headers by name, their values masked.
func maskHeaders(headers []WebhookHeader) []WebhookHeader {
	out := make([]WebhookHeader, len(headers))
	for i, h := range headers {
		out[i] = WebhookHeader{Key: h.Key, Value: MaskSecret(h.Value)}
	}
	return out
}

// noStoredHeader says why SecretMask cannot be a header's value here.
const noStoredHeader = "stands for the stored value of a header of that name, and there is none"

// unmaskHeaders gives each header sent back with SecretMask the stored
// value of the header of its name; a mask that names no stored header is
// invalid (why says so), as it cannot mean what it says.
func unmaskHeaders(v *core.Validator, headers, stored []WebhookHeader, why string) []WebhookHeader {
	out := slices.Clone(headers)
	for i, h := range out {
		if h.Value != SecretMask {
			continue
		}
		j := slices.IndexFunc(stored, func(s WebhookHeader) bool { return strings.EqualFold(s.Key, h.Key) })
		if j < 0 {
			v.At("headers", "invalid", fmt.Sprintf("headers[%d]", i), h.Key+": "+SecretMask+" "+why)
			return headers
		}
		out[i].Value = stored[j].Value
	}
	return out
}

// checkWebhook validates an input against the organization's environments.
func checkWebhook(v *core.Validator, in *WebhookInput, envs scopeEnvs) {
	v.Required("name", in.Name, core.MaxNameLen)
	in.URL = strings.TrimSpace(in.URL)
	if in.URL == "" {
		v.Add("url", "required")
	} else if !validWebhookURL(in.URL) {
		v.Add("url", "invalid")
	}
	if len(in.Scopes) == 0 {
		v.Add("scopes", "required")
	} else if len(in.Scopes) > MaxWebhookScopes {
		v.Add("scopes", "invalid")
	} else {
		for _, sc := range in.Scopes {
			pid, ids, ok := parseScope(sc)
			for _, id := range ids {
				if r, found := envs[id]; !found || r.ProjectID != pid {
					ok = false
				}
			}
			if !ok {
				v.Add("scopes", "invalid")
				break
			}
		}
	}
	if len(in.Events) == 0 {
		v.Add("events", "required")
	} else if slices.ContainsFunc(in.Events, func(e string) bool { return !slices.Contains(WebhookEvents, e) }) {
		v.Add("events", "invalid")
	}
	if in.PayloadTemplateType == "" {
		in.PayloadTemplateType = PayloadDefault
	}
	// Custom templates are FeatBit's Handlebars; Bunting sends the default
	// data object only, and says so rather than sending something else.
	v.OneOf("payloadTemplateType", in.PayloadTemplateType, PayloadDefault, PayloadSlack)
	v.Text("payloadTemplate", in.PayloadTemplate, MaxWebhookTemplate)
	checkHeaders(v, in.Headers)
	if in.Secret != nil {
		v.Text("secret", *in.Secret, MaxWebhookSecretLen)
	}
	in.Events = distinctStrings(in.Events)
	in.Scopes = distinctStrings(in.Scopes)
	if in.Headers == nil {
		in.Headers = []WebhookHeader{}
	}
}

// validWebhookURL accepts an absolute http or https URL without credentials;
// where it may point is the outbound client's to decide, when it dials.
func validWebhookURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && len(raw) <= MaxWebhookURLLen && (u.Scheme == "http" || u.Scheme == "https") &&
		u.Host != "" && u.User == nil
}

// checkHeaders accepts at most MaxWebhookHeaders well-formed headers.
func checkHeaders(v *core.Validator, headers []WebhookHeader) {
	if len(headers) > MaxWebhookHeaders {
		v.Add("headers", "invalid")
		return
	}
	for _, h := range headers {
		if !httpguts.ValidHeaderFieldName(h.Key) || !httpguts.ValidHeaderFieldValue(h.Value) ||
			len(h.Key)+len(h.Value) > MaxWebhookHeaderLen {
			v.Add("headers", "invalid")
			return
		}
	}
}

func distinctStrings(in []string) []string {
	out := []string{}
	for _, s := range in {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// webhookOut turns a row into its view, with the secret and the headers'
// values masked.
func (s *Webhooks) webhookOut(row db.Webhook, envs scopeEnvs, creator *core.TokenCreator) Webhook {
	w := Webhook{ID: row.ID, Name: row.Name, URL: row.Url, Scopes: row.Scopes, Events: row.Events,
		PayloadTemplateType: row.PayloadTemplateType, PayloadTemplate: row.PayloadTemplate, IsActive: row.IsActive,
		PreventEmptyPayloads: row.PreventEmptyPayloads, Creator: creator, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt,
		Headers: []WebhookHeader{}, ScopeNames: []string{}}
	_ = json.Unmarshal(row.Headers, &w.Headers)
	w.Headers = maskHeaders(w.Headers)
	if len(row.LastDelivery) > 0 {
		var last LastDelivery
		if json.Unmarshal(row.LastDelivery, &last) == nil {
			w.LastDelivery = &last
		}
	}
	for _, sc := range row.Scopes {
		w.ScopeNames = append(w.ScopeNames, envs.name(sc))
	}
	w.HasSecret = row.SealedSecret != ""
	if w.HasSecret {
		w.Secret = SecretMask
	}
	w.Undeliverable = undeliverable(row.Url, s.core.WebhookPrivateNetworks)
	return w
}

// undeliverable says why a webhook URL can never be delivered to from
// this server, or "" when it may be: its host is an address (or
// localhost) the outbound client refuses. Other names are checked when a
// delivery dials them.
func undeliverable(raw string, allowPrivate bool) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	addr, err := netip.ParseAddr(host)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		addr, err = netip.MustParseAddr("127.0.0.1"), nil
	}
	if err != nil {
		return ""
	}
	if err := reach.Check(addr, allowPrivate); err != nil {
		why := "Bunting does not deliver webhooks to " + u.Hostname() + ": it is a " + reach.Reason(err)
		if !allowPrivate && reach.Check(addr, true) == nil {
			why += ", which this server reaches only with BUNTING_WEBHOOK_ALLOW_PRIVATE_NETWORKS set"
		}
		return why + ". Every delivery will fail."
	}
	return ""
}

// WebhookSecret opens a webhook's stored secret.
func (s *Webhooks) WebhookSecret(row db.Webhook) (string, error) {
	if row.SealedSecret == "" {
		return "", nil
	}
	return s.core.ServerKeys.Open(row.SealedSecret)
}

func (s *Webhooks) creatorOf(ctx context.Context, q *db.Queries, id *uuid.UUID) *core.TokenCreator {
	if id == nil {
		return nil
	}
	u, err := q.GetUser(ctx, *id)
	if err != nil {
		return nil
	}
	return &core.TokenCreator{ID: u.ID, Name: u.Name, Email: u.Email}
}

// CreateWebhook adds a webhook to the current organization.
func (s *Webhooks) CreateWebhook(ctx context.Context, a *core.Actor, in WebhookInput) (Webhook, error) {
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return Webhook{}, err
	}
	envs, err := s.orgEnvs(ctx, s.core.Q, orgID)
	if err != nil {
		return Webhook{}, err
	}
	var v core.Validator
	checkWebhook(&v, &in, envs)
	// Nothing is stored yet for the mask to stand for.
	if in.Secret != nil && *in.Secret == SecretMask {
		v.Add("secret", "invalid")
	}
	in.Headers = unmaskHeaders(&v, in.Headers, nil, noStoredHeader)
	if err := v.Err(); err != nil {
		return Webhook{}, err
	}
	if err := envs.requireScopes(a, in.Scopes); err != nil {
		return Webhook{}, err
	}
	sealed := ""
	if in.Secret != nil && *in.Secret != "" {
		sealed = s.core.ServerKeys.Seal(*in.Secret)
	}
	headers, err := json.Marshal(in.Headers)
	if err != nil {
		return Webhook{}, err
	}
	var creator *uuid.UUID
	if !a.IsToken() {
		creator = &a.UserID
	}
	var out Webhook
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		if err := q.LockWebhooks(ctx, orgID); err != nil {
			return err
		}
		if n, err := q.CountOrganizationWebhooks(ctx, orgID); err != nil {
			return err
		} else if n >= MaxWebhooksPerOrg {
			return ErrTooManyWebhooks
		}
		used, err := q.WebhookNameUsed(ctx, db.WebhookNameUsedParams{OrganizationID: orgID, Name: strings.TrimSpace(in.Name)})
		if err != nil {
			return err
		}
		if used {
			return core.ErrNameUsed
		}
		row, err := q.CreateWebhook(ctx, db.CreateWebhookParams{OrganizationID: orgID, Name: strings.TrimSpace(in.Name),
			Url: in.URL, Scopes: in.Scopes, Events: in.Events, Headers: headers, PayloadTemplateType: in.PayloadTemplateType,
			PayloadTemplate: in.PayloadTemplate, SealedSecret: sealed, IsActive: in.IsActive,
			PreventEmptyPayloads: in.PreventEmptyPayloads, CreatorID: creator})
		if err != nil {
			return err
		}
		out = s.webhookOut(row, envs, s.creatorOf(ctx, q, creator))
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Webhook", RefID: row.ID.String(), Keyword: row.Name,
			Operation: core.OpCreate, Current: out})
	})
	return out, err
}

// UpdateWebhook replaces a webhook's settings.
func (s *Webhooks) UpdateWebhook(ctx context.Context, a *core.Actor, id uuid.UUID, in WebhookInput) (Webhook, error) {
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return Webhook{}, err
	}
	// Another organization's webhook is not found, whatever the input.
	current, err := s.core.Q.GetWebhook(ctx, db.GetWebhookParams{OrganizationID: orgID, ID: id})
	if err != nil {
		return Webhook{}, core.Translate(err)
	}
	envs, err := s.orgEnvs(ctx, s.core.Q, orgID)
	if err != nil {
		return Webhook{}, err
	}
	var v core.Validator
	checkWebhook(&v, &in, envs)
	// A masked header with no stored value is said with the other problems
	// (the transaction checks again against the row it locks).
	unmaskHeaders(&v, in.Headers, headersOf(current), noStoredHeader)
	if err := v.Err(); err != nil {
		return Webhook{}, err
	}
	if err := envs.requireScopes(a, in.Scopes); err != nil {
		return Webhook{}, err
	}
	var out Webhook
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		before, err := q.GetWebhook(ctx, db.GetWebhookParams{OrganizationID: orgID, ID: id})
		if err != nil {
			return err
		}
		var v core.Validator
		in.Headers = unmaskHeaders(&v, in.Headers, headersOf(before), noStoredHeader)
		if err := v.Err(); err != nil {
			return err
		}
		headers, err := json.Marshal(in.Headers)
		if err != nil {
			return err
		}
		name := strings.TrimSpace(in.Name)
		if !strings.EqualFold(name, before.Name) {
			used, err := q.WebhookNameUsed(ctx, db.WebhookNameUsedParams{OrganizationID: orgID, Name: name})
			if err != nil {
				return err
			}
			if used {
				return core.ErrNameUsed
			}
		}
		sealed := before.SealedSecret
		if in.Secret != nil {
			switch *in.Secret {
			case "":
				sealed = ""
			case SecretMask: // as shown: the stored one
			default:
				sealed = s.core.ServerKeys.Seal(*in.Secret)
			}
		}
		var updator *uuid.UUID
		if !a.IsToken() {
			updator = &a.UserID
		}
		row, err := q.UpdateWebhook(ctx, db.UpdateWebhookParams{OrganizationID: orgID, ID: id, Name: name,
			Url: in.URL, Scopes: in.Scopes, Events: in.Events, Headers: headers, PayloadTemplateType: in.PayloadTemplateType,
			PayloadTemplate: in.PayloadTemplate, SealedSecret: sealed, IsActive: in.IsActive,
			PreventEmptyPayloads: in.PreventEmptyPayloads, UpdatorID: updator})
		if err != nil {
			return err
		}
		out = s.webhookOut(row, envs, s.creatorOf(ctx, q, row.CreatorID))
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Webhook", RefID: row.ID.String(), Keyword: row.Name,
			Operation: core.OpUpdate, Previous: s.webhookOut(before, envs, nil), Current: out})
	})
	return out, err
}

// GetWebhook returns one of the organization's webhooks.
func (s *Webhooks) GetWebhook(ctx context.Context, a *core.Actor, id uuid.UUID) (Webhook, error) {
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return Webhook{}, err
	}
	row, err := s.core.Q.GetWebhook(ctx, db.GetWebhookParams{OrganizationID: orgID, ID: id})
	if err != nil {
		return Webhook{}, core.Translate(err)
	}
	envs, err := s.orgEnvs(ctx, s.core.Q, orgID)
	if err != nil {
		return Webhook{}, err
	}
	return s.webhookOut(row, envs, s.creatorOf(ctx, s.core.Q, row.CreatorID)), nil
}

// ListWebhooks pages the organization's webhooks by name.
func (s *Webhooks) ListWebhooks(ctx context.Context, a *core.Actor, f WebhookFilter) (core.Paged[Webhook], error) {
	var v core.Validator
	f.Page.Check(&v)
	v.Text("name", f.Name, core.MaxNameLen)
	for field, id := range map[string]string{"projectId": f.ProjectID, "envId": f.EnvID} {
		if _, err := uuid.Parse(id); id != "" && err != nil {
			v.Add(field, "invalid")
		}
	}
	if err := v.Err(); err != nil {
		return core.Paged[Webhook]{}, err
	}
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return core.Paged[Webhook]{}, err
	}
	envs, err := s.orgEnvs(ctx, s.core.Q, orgID)
	if err != nil {
		return core.Paged[Webhook]{}, err
	}
	rows, err := s.core.Q.ListWebhooks(ctx, db.ListWebhooksParams{OrganizationID: orgID, Name: core.EscapeLike(f.Name),
		ProjectID: f.ProjectID, EnvID: f.EnvID, PageSize: f.Page.Limit(), PageOffset: f.Page.Offset()})
	return core.PageOf(rows, err, func(r db.Webhook) Webhook { return s.webhookOut(r, envs, s.creatorOf(ctx, s.core.Q, r.CreatorID)) },
		func() (int64, error) {
			return s.core.Q.CountWebhooks(ctx, db.CountWebhooksParams{OrganizationID: orgID, Name: core.EscapeLike(f.Name),
				ProjectID: f.ProjectID, EnvID: f.EnvID})
		})
}

// IsWebhookNameUsed tells whether the organization has a webhook of a name.
func (s *Webhooks) IsWebhookNameUsed(ctx context.Context, a *core.Actor, name string) (bool, error) {
	var v core.Validator
	v.Required("name", name, core.MaxNameLen)
	if err := v.Err(); err != nil {
		return false, err
	}
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return false, err
	}
	used, err := s.core.Q.WebhookNameUsed(ctx, db.WebhookNameUsedParams{OrganizationID: orgID, Name: strings.TrimSpace(name)})
	return used, core.Translate(err)
}

// DeleteWebhook removes a webhook with its pending deliveries and its log.
func (s *Webhooks) DeleteWebhook(ctx context.Context, a *core.Actor, id uuid.UUID) error {
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return err
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		row, err := q.DeleteWebhook(ctx, db.DeleteWebhookParams{OrganizationID: orgID, ID: id})
		if err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Webhook", RefID: row.ID.String(), Keyword: row.Name,
			Operation: core.OpRemove, Previous: s.webhookOut(row, nil, nil)})
	})
}

// AuthorizeWebhooks checks what every webhook operation requires: managing
// the organization's webhooks (webhookOrg).
func (s *Webhooks) AuthorizeWebhooks(ctx context.Context, a *core.Actor) error {
	_, err := s.webhookOrg(ctx, a)
	return err
}
