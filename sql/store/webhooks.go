package store

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/net/http/httpguts"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
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
}

// Webhook payload template types; Bunting sends FeatBit's default data
// object and does not render custom (Handlebars) templates.
const (
	PayloadDefault = "default"
	PayloadCustom  = "custom"
)

// Webhook bounds.
const (
	MaxWebhookURLLen    = 2048
	MaxWebhookHeaders   = 20
	MaxWebhookHeaderLen = 1024
	MaxWebhookSecretLen = 256
	MaxWebhookScopes    = 100
	MaxWebhookTemplate  = 64 << 10
)

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

// Webhook is FeatBit's WebhookVm. Secret is masked: the value itself is
// only ever sent, never shown again after it is set.
type Webhook struct {
	ID                   uuid.UUID       `json:"id"`
	Name                 string          `json:"name"`
	URL                  string          `json:"url"`
	Scopes               []string        `json:"scopes"`
	ScopeNames           []string        `json:"scopeNames"`
	Events               []string        `json:"events"`
	Headers              []WebhookHeader `json:"headers"`
	PayloadTemplateType  string          `json:"payloadTemplateType"`
	PayloadTemplate      string          `json:"payloadTemplate"`
	Secret               string          `json:"secret"`
	IsActive             bool            `json:"isActive"`
	PreventEmptyPayloads bool            `json:"preventEmptyPayloads"`
	LastDelivery         *LastDelivery   `json:"lastDelivery"`
	Creator              *TokenCreator   `json:"creator"`
	CreatedAt            time.Time       `json:"createdAt"`
	UpdatedAt            time.Time       `json:"updatedAt"`
}

// WebhookInput creates or replaces a webhook (FeatBit's WebhookBase). A nil
// Secret on update keeps the stored one, as does the masked value the
// webhook was shown with; "" removes it (deliveries go unsigned).
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
	Page      Page
}

// WebhookAction is what managing webhooks takes. FeatBit's IAM has no
// webhook action (its UI shows the page to every member): a webhook sends
// flag data to any URL with the organization's name on it, so Bunting asks
// for the organization-management permission, on the organization's RN.
const WebhookAction = access.UpdateOrgName

// webhookOrg checks that a person may manage the organization's webhooks
// and returns the organization.
func (s *Store) webhookOrg(ctx context.Context, a *Actor) (uuid.UUID, error) {
	orgID, err := a.org()
	if err != nil {
		return uuid.Nil, err
	}
	row, err := s.q.GetOrganization(ctx, orgID)
	if err != nil {
		return uuid.Nil, translate(err)
	}
	return orgID, a.require(WebhookAction, OrganizationRN(row.Key))
}

// MayManageWebhooks tells the pages whether to show the webhooks.
func (s *Store) MayManageWebhooks(ctx context.Context, a *Actor) bool {
	_, err := s.webhookOrg(ctx, a)
	return err == nil
}

// maskSecret shows that a secret is set without showing it.
func maskSecret(secret string) string {
	switch {
	case secret == "":
		return ""
	case len(secret) < 12:
		return "********"
	}
	return secret[:2] + "********" + secret[len(secret)-2:]
}

// scopeEnvs is an organization's environments by id, with their project.
type scopeEnvs map[uuid.UUID]db.OrganizationEnvironmentsRow

func (s *Store) orgEnvs(ctx context.Context, q *db.Queries, orgID uuid.UUID) (scopeEnvs, error) {
	rows, err := q.OrganizationEnvironments(ctx, orgID)
	if err != nil {
		return nil, translate(err)
	}
	out := make(scopeEnvs, len(rows))
	for _, r := range rows {
		out[r.EnvID] = r
	}
	return out, nil
}

// parseScope reads FeatBit's scope string "{projectId}/{envId},{envId}".
func parseScope(scope string) (uuid.UUID, []uuid.UUID, bool) {
	project, envs, ok := strings.Cut(scope, "/")
	if !ok {
		return uuid.Nil, nil, false
	}
	pid, err := uuid.Parse(project)
	if err != nil {
		return uuid.Nil, nil, false
	}
	var ids []uuid.UUID
	for _, e := range strings.Split(envs, ",") {
		id, err := uuid.Parse(e)
		if err != nil {
			return uuid.Nil, nil, false
		}
		ids = append(ids, id)
	}
	return pid, ids, true
}

// scopeMatches tells whether a scope covers an environment of a project.
func scopeMatches(scope string, projectID, envID uuid.UUID) bool {
	pid, envs, ok := parseScope(scope)
	return ok && pid == projectID && slices.Contains(envs, envID)
}

// name says a scope in words: "Project/Env, Env".
func (e scopeEnvs) name(scope string) string {
	_, envs, ok := parseScope(scope)
	if !ok {
		return scope
	}
	var project string
	var names []string
	for _, id := range envs {
		if r, ok := e[id]; ok {
			project = r.ProjectName
			names = append(names, r.EnvName)
		}
	}
	return project + "/" + strings.Join(names, ",")
}

// checkWebhook validates an input against the organization's environments.
func checkWebhook(v *validator, in *WebhookInput, envs scopeEnvs) {
	v.required("name", in.Name, MaxNameLen)
	in.URL = strings.TrimSpace(in.URL)
	if in.URL == "" {
		v.add("url", "required")
	} else if !validWebhookURL(in.URL) {
		v.add("url", "invalid")
	}
	if len(in.Scopes) == 0 {
		v.add("scopes", "required")
	} else if len(in.Scopes) > MaxWebhookScopes {
		v.add("scopes", "invalid")
	} else {
		for _, sc := range in.Scopes {
			pid, ids, ok := parseScope(sc)
			for _, id := range ids {
				if r, found := envs[id]; !found || r.ProjectID != pid {
					ok = false
				}
			}
			if !ok {
				v.add("scopes", "invalid")
				break
			}
		}
	}
	if len(in.Events) == 0 {
		v.add("events", "required")
	} else if slices.ContainsFunc(in.Events, func(e string) bool { return !slices.Contains(WebhookEvents, e) }) {
		v.add("events", "invalid")
	}
	if in.PayloadTemplateType == "" {
		in.PayloadTemplateType = PayloadDefault
	}
	// Custom templates are FeatBit's Handlebars; Bunting sends the default
	// data object only, and says so rather than sending something else.
	v.oneOf("payloadTemplateType", in.PayloadTemplateType, PayloadDefault)
	v.text("payloadTemplate", in.PayloadTemplate, MaxWebhookTemplate)
	checkHeaders(v, in.Headers)
	if in.Secret != nil {
		v.text("secret", *in.Secret, MaxWebhookSecretLen)
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
func checkHeaders(v *validator, headers []WebhookHeader) {
	if len(headers) > MaxWebhookHeaders {
		v.add("headers", "invalid")
		return
	}
	for _, h := range headers {
		if !httpguts.ValidHeaderFieldName(h.Key) || !httpguts.ValidHeaderFieldValue(h.Value) ||
			len(h.Key)+len(h.Value) > MaxWebhookHeaderLen {
			v.add("headers", "invalid")
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

// webhookOut turns a row into its view, with the secret masked.
func (s *Store) webhookOut(row db.Webhook, envs scopeEnvs, creator *TokenCreator) Webhook {
	w := Webhook{ID: row.ID, Name: row.Name, URL: row.Url, Scopes: row.Scopes, Events: row.Events,
		PayloadTemplateType: row.PayloadTemplateType, PayloadTemplate: row.PayloadTemplate, IsActive: row.IsActive,
		PreventEmptyPayloads: row.PreventEmptyPayloads, Creator: creator, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt,
		Headers: []WebhookHeader{}, ScopeNames: []string{}}
	_ = json.Unmarshal(row.Headers, &w.Headers)
	if len(row.LastDelivery) > 0 {
		var last LastDelivery
		if json.Unmarshal(row.LastDelivery, &last) == nil {
			w.LastDelivery = &last
		}
	}
	for _, sc := range row.Scopes {
		w.ScopeNames = append(w.ScopeNames, envs.name(sc))
	}
	if secret, err := s.webhookSecret(row); err == nil {
		w.Secret = maskSecret(secret)
	}
	return w
}

// webhookSecret opens a webhook's stored secret.
func (s *Store) webhookSecret(row db.Webhook) (string, error) {
	if row.SealedSecret == "" {
		return "", nil
	}
	return s.keys.Open(row.SealedSecret)
}

func (s *Store) creatorOf(ctx context.Context, q *db.Queries, id *uuid.UUID) *TokenCreator {
	if id == nil {
		return nil
	}
	u, err := q.GetUser(ctx, *id)
	if err != nil {
		return nil
	}
	return &TokenCreator{u.ID, u.Name, u.Email}
}

// CreateWebhook adds a webhook to the current organization.
func (s *Store) CreateWebhook(ctx context.Context, a *Actor, in WebhookInput) (Webhook, error) {
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return Webhook{}, err
	}
	envs, err := s.orgEnvs(ctx, s.q, orgID)
	if err != nil {
		return Webhook{}, err
	}
	var v validator
	checkWebhook(&v, &in, envs)
	if err := v.err(); err != nil {
		return Webhook{}, err
	}
	sealed := ""
	if in.Secret != nil && *in.Secret != "" {
		sealed = s.keys.Seal(*in.Secret)
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
	err = s.inTx(ctx, func(q *db.Queries) error {
		used, err := q.WebhookNameUsed(ctx, db.WebhookNameUsedParams{OrganizationID: orgID, Name: strings.TrimSpace(in.Name)})
		if err != nil {
			return err
		}
		if used {
			return ErrNameUsed
		}
		row, err := q.CreateWebhook(ctx, db.CreateWebhookParams{OrganizationID: orgID, Name: strings.TrimSpace(in.Name),
			Url: in.URL, Scopes: in.Scopes, Events: in.Events, Headers: headers, PayloadTemplateType: in.PayloadTemplateType,
			PayloadTemplate: in.PayloadTemplate, SealedSecret: sealed, IsActive: in.IsActive,
			PreventEmptyPayloads: in.PreventEmptyPayloads, CreatorID: creator})
		if err != nil {
			return err
		}
		out = s.webhookOut(row, envs, s.creatorOf(ctx, q, creator))
		return s.audit(ctx, q, a, change{refType: "Webhook", refID: row.ID.String(), keyword: row.Name,
			operation: OpCreate, current: out})
	})
	return out, err
}

// UpdateWebhook replaces a webhook's settings.
func (s *Store) UpdateWebhook(ctx context.Context, a *Actor, id uuid.UUID, in WebhookInput) (Webhook, error) {
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return Webhook{}, err
	}
	// Another organization's webhook is not found, whatever the input.
	if _, err := s.q.GetWebhook(ctx, db.GetWebhookParams{OrganizationID: orgID, ID: id}); err != nil {
		return Webhook{}, translate(err)
	}
	envs, err := s.orgEnvs(ctx, s.q, orgID)
	if err != nil {
		return Webhook{}, err
	}
	var v validator
	checkWebhook(&v, &in, envs)
	if err := v.err(); err != nil {
		return Webhook{}, err
	}
	headers, err := json.Marshal(in.Headers)
	if err != nil {
		return Webhook{}, err
	}
	var out Webhook
	err = s.inTx(ctx, func(q *db.Queries) error {
		before, err := q.GetWebhook(ctx, db.GetWebhookParams{OrganizationID: orgID, ID: id})
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
				return ErrNameUsed
			}
		}
		sealed := before.SealedSecret
		if in.Secret != nil {
			old, _ := s.webhookSecret(before)
			switch {
			case *in.Secret == "":
				sealed = ""
			case *in.Secret != maskSecret(old):
				sealed = s.keys.Seal(*in.Secret)
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
		return s.audit(ctx, q, a, change{refType: "Webhook", refID: row.ID.String(), keyword: row.Name,
			operation: OpUpdate, previous: s.webhookOut(before, envs, nil), current: out})
	})
	return out, err
}

// GetWebhook returns one of the organization's webhooks.
func (s *Store) GetWebhook(ctx context.Context, a *Actor, id uuid.UUID) (Webhook, error) {
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return Webhook{}, err
	}
	row, err := s.q.GetWebhook(ctx, db.GetWebhookParams{OrganizationID: orgID, ID: id})
	if err != nil {
		return Webhook{}, translate(err)
	}
	envs, err := s.orgEnvs(ctx, s.q, orgID)
	if err != nil {
		return Webhook{}, err
	}
	return s.webhookOut(row, envs, s.creatorOf(ctx, s.q, row.CreatorID)), nil
}

// ListWebhooks pages the organization's webhooks by name.
func (s *Store) ListWebhooks(ctx context.Context, a *Actor, f WebhookFilter) (Paged[Webhook], error) {
	var v validator
	f.Page.check(&v)
	v.text("name", f.Name, MaxNameLen)
	for field, id := range map[string]string{"projectId": f.ProjectID, "envId": f.EnvID} {
		if _, err := uuid.Parse(id); id != "" && err != nil {
			v.add(field, "invalid")
		}
	}
	if err := v.err(); err != nil {
		return Paged[Webhook]{}, err
	}
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return Paged[Webhook]{}, err
	}
	envs, err := s.orgEnvs(ctx, s.q, orgID)
	if err != nil {
		return Paged[Webhook]{}, err
	}
	rows, err := s.q.ListWebhooks(ctx, db.ListWebhooksParams{OrganizationID: orgID, Name: escapeLike(f.Name),
		ProjectID: f.ProjectID, EnvID: f.EnvID, PageSize: f.Page.limit(), PageOffset: f.Page.offset()})
	return paged(rows, err, func(r db.Webhook) Webhook { return s.webhookOut(r, envs, s.creatorOf(ctx, s.q, r.CreatorID)) },
		func() (int64, error) {
			return s.q.CountWebhooks(ctx, db.CountWebhooksParams{OrganizationID: orgID, Name: escapeLike(f.Name),
				ProjectID: f.ProjectID, EnvID: f.EnvID})
		})
}

// IsWebhookNameUsed tells whether the organization has a webhook of a name.
func (s *Store) IsWebhookNameUsed(ctx context.Context, a *Actor, name string) (bool, error) {
	var v validator
	v.required("name", name, MaxNameLen)
	if err := v.err(); err != nil {
		return false, err
	}
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return false, err
	}
	used, err := s.q.WebhookNameUsed(ctx, db.WebhookNameUsedParams{OrganizationID: orgID, Name: strings.TrimSpace(name)})
	return used, translate(err)
}

// DeleteWebhook removes a webhook with its pending deliveries and its log.
func (s *Store) DeleteWebhook(ctx context.Context, a *Actor, id uuid.UUID) error {
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(q *db.Queries) error {
		row, err := q.DeleteWebhook(ctx, db.DeleteWebhookParams{OrganizationID: orgID, ID: id})
		if err != nil {
			return err
		}
		return s.audit(ctx, q, a, change{refType: "Webhook", refID: row.ID.String(), keyword: row.Name,
			operation: OpRemove, previous: s.webhookOut(row, nil, nil)})
	})
}

// WebhookScope is an environment a webhook's scopes can name, for the form.
type WebhookScope struct {
	ProjectID, EnvID     uuid.UUID
	ProjectName, EnvName string
}

// Scope is FeatBit's scope string of this one environment.
func (w WebhookScope) Scope() string { return w.ProjectID.String() + "/" + w.EnvID.String() }

// WebhookScopes lists the environments a webhook can be scoped to, by project and name.
func (s *Store) WebhookScopes(ctx context.Context, a *Actor) ([]WebhookScope, error) {
	orgID, err := s.webhookOrg(ctx, a)
	if err != nil {
		return nil, err
	}
	rows, err := s.q.OrganizationEnvironments(ctx, orgID)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]WebhookScope, len(rows))
	for i, r := range rows {
		out[i] = WebhookScope{r.ProjectID, r.EnvID, r.ProjectName, r.EnvName}
	}
	return out, nil
}

// Covers tells whether any of a webhook's scopes names an environment.
func (w Webhook) Covers(projectID, envID uuid.UUID) bool {
	return scopesCover(w.Scopes, projectID, envID)
}

// scopesCover tells whether any of a webhook's scopes names an environment.
func scopesCover(scopes []string, projectID, envID uuid.UUID) bool {
	return slices.ContainsFunc(scopes, func(sc string) bool { return scopeMatches(sc, projectID, envID) })
}
