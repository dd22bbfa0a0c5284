// Package views holds the admin pages' templ components and the view models
// they take. View models are shaped like the screen: plain strings, flags and
// lists, already decided by the handlers in package web. Nothing here knows
// about HTTP, the database or the store.
package views

import "strconv"

// Assets are the content-hashed URLs of the static files every page loads.
type Assets struct {
	CSS, HTMX, JS, Icon string
	// NavCSS styles the navigation around signed-in pages (nav.css), kept
	// apart from CSS by subject.
	NavCSS string
}

// Doc is what the HTML document around any content needs.
type Doc struct {
	Title  string
	Assets Assets
	// CSRF is the anti-forgery token; forms carry it as a field and app.js
	// sends it as a header with htmx requests.
	CSRF string
}

// htmxConfig is htmx's configuration, read from a meta element (see Document).
// htmx keeps no copies of pages for the back button (historyCacheSize 0): they
// would land in sessionStorage, secrets and one-time token values included.
const htmxConfig = `{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"selfRequestsOnly":true,` +
	`"historyCacheSize":0,"refreshOnHistoryMiss":true,` +
	`"responseHandling":[{"code":"204","swap":false},{"code":"[23]..","swap":true},{"code":"[45]..","swap":true,"error":true}]}`

// Shell is the frame of every signed-in page.
type Shell struct {
	Doc
	// Nav is the main navigation, in groups: daily work apart from
	// administration.
	Nav       []NavGroup
	UserEmail string
	Switcher  Switcher
	Flashes   []Flash
	// Reviews is how many change requests wait for the person's review
	// across the organization; the top bar links to them when any do.
	Reviews int
}

// NavGroup is one headed group of the main navigation; ID names its heading,
// which labels the group's list.
type NavGroup struct {
	ID, Heading string
	Items       []NavItem
}

// NavItem is one entry of the main navigation.
type NavItem struct {
	Label, Href, TestID string
	Active              bool
}

// Switcher chooses the organization and the project environment the person works in.
type Switcher struct {
	CSRF string
	// Next is where to return after switching.
	Next string
	// OrgName is shown when there is only one organization; Orgs lists them
	// when there are several.
	OrgName string
	Orgs    []Option
	// NewOrgHref leads to creating an organization; empty for those who may not.
	NewOrgHref string
	// Envs are the environments the person may open, grouped by project.
	Envs []OptionGroup
}

// Option is one choice of a select.
type Option struct {
	Value, Label string
	Selected     bool
}

// OptionGroup is a labelled group of options.
type OptionGroup struct {
	Label   string
	Options []Option
}

// Flash is a message about what just happened.
type Flash struct {
	// Kind is "success" or "error".
	Kind, Text string
}

// Form is one HTML form's state: the values to show and the problems found
// with them, next to the field they concern or, in Error, for the whole form.
type Form struct {
	// ID tells the page's forms apart; field ids start with it.
	ID     string
	CSRF   string
	Action string
	Values map[string]string
	Errors map[string]string
	Error  string
	// Request, in an environment whose changes need approval, turns a flag
	// change's form into a change request: a reason and reviewers instead
	// of a comment (Values["reason"]).
	Request *ChangeRequestFields
}

// ChangeRequestFields ask for the reviewers of a change request.
type ChangeRequestFields struct {
	// Reviewers are those who may approve, chosen ones selected.
	Reviewers []Option
	Approvals int
}

// Login is the sign-in page.
type Login struct {
	Doc
	Form Form
	// SSO is nil when no workspace offers single sign-on.
	SSO *LoginSSO
}

// ErrorPage explains a failed request.
type ErrorPage struct {
	Doc
	Status         int
	Heading, Text  string
	HomeHref, Home string
}

// Confirm asks before something is deleted, naming everything that goes with it.
type Confirm struct {
	Shell
	Crumbs       []Crumb
	Heading      string
	Consequences []string
	// Action is where the deletion posts; empty when the person may not delete.
	Action     string
	Button     string
	CancelHref string
	// Blocked, when set, says why the deletion is not possible (a rule, not
	// a permission); there is then no Action.
	Blocked string
	// TypeToConfirm, when set, must be typed before the deletion goes
	// ahead (a project's key); Typed and Problem show a wrong attempt again.
	TypeToConfirm, Typed, Problem string
}

// Crumb is one step of a breadcrumb trail.
type Crumb struct {
	Label, Href string
}

// Projects is the projects page.
type Projects struct {
	Shell
	List ProjectList
	// Create is nil when the person may not create projects.
	Create *Form
}

// ProjectList lists the projects the person may see.
type ProjectList struct {
	Rows []ProjectRow
}

// ProjectRow is one project in the list.
type ProjectRow struct {
	Name, Key, Href string
	Envs            []EnvLink
}

// EnvLink links to an environment; Current marks the one the switcher has chosen.
type EnvLink struct {
	Name, Href string
	Current    bool
}

// Project is one project's page: its name, its environments, and deletion.
type Project struct {
	Shell
	Name, Key string
	// Rename is nil when the person may not rename the project.
	Rename *Form
	Envs   EnvList
	// DeleteHref is empty when the person may not delete the project.
	DeleteHref string
}

// EnvList lists a project's environments, with the form that adds one.
type EnvList struct {
	Rows []EnvRow
	// Create is nil when the person may not add environments.
	Create *Form
}

// EnvRow is one environment in a project's list.
type EnvRow struct {
	Name, Key, Description, Href string
	RequireComment               bool
	// DeleteHref is empty when the person may not delete it.
	DeleteHref string
}

// Environment is one environment's page: settings and secrets.
type Environment struct {
	Shell
	Crumbs    []Crumb
	Name, Key string
	Settings  EnvSettings
	Secrets   SecretList
	// DeleteHref is empty when the person may not delete the environment.
	DeleteHref string
}

// EnvSettings shows an environment's settings, as a form when the person may change them.
type EnvSettings struct {
	Form     Form
	Editable bool
	// Key is the environment's key, shown but never edited: resource
	// names, policies and shared segments' scopes name it.
	Key string
	// Approval is the setting "changes need approval": Form.Values carry
	// changeRequestEnabled ("true") and approvalsRequired; Members and
	// Groups are the choices of approvers, selected when chosen.
	Members, Groups []Option
	// Approvers names who may approve, for those who may not edit.
	Approvers string
}

// SecretList lists an environment's secrets.
type SecretList struct {
	CSRF string
	Rows []SecretRow
	// Create is nil when the person may not add secrets.
	Create *Form
	Types  []Option
}

// SecretRow is one secret, masked until revealed.
type SecretRow struct {
	ID, Name, Type, Value string
	// Rename is nil when the person may not rename it; DeleteAction is empty
	// when they may not delete it.
	Rename       *Form
	DeleteAction string
}

// AccessTokens is the access tokens page.
type AccessTokens struct {
	Shell
	Create TokenCreate
	List   TokenList
}

// TokenCreate is the form that creates a token and, right after creation, the
// new token's value, shown this once.
type TokenCreate struct {
	// Form is nil when the person may create no kind of token.
	Form  *Form
	Types []Option
	// Created is the new token, set only in the answer to its creation.
	Created *CreatedToken
	// Editor edits a new Service token's statements; nil when the person
	// may not create Service tokens.
	Editor *StatementEditor
}

// CreatedToken is a token just created, with its value.
type CreatedToken struct {
	Name, Value string
}

// TokenList is one page of tokens.
type TokenList struct {
	CSRF  string
	Rows  []TokenRow
	Pager Pager
	// Page is the current page, posted back by the row actions so the list
	// stays where it was.
	Page string
	// Search is the part of a name the list is narrowed to.
	Search string
}

// TokenRow is one access token.
type TokenRow struct {
	ID, Name, Type, Status, Creator, LastUsed, Preview string
	Active                                             bool
	// ToggleAction is empty when the person may not turn it on or off (as
	// its status asks), DeleteAction when they may not delete it.
	ToggleAction, DeleteAction string
	// EditHref opens the token's page; empty when the person may not edit it.
	EditHref string
}

// Pager moves between pages of a list.
type Pager struct {
	Label      string
	Prev, Next string
	// First and Last, where set, jump to the ends of a long list.
	First, Last string
}

// Workspace is the workspace settings page.
type Workspace struct {
	Shell
	General WorkspaceGeneral
	// SSO is nil when the person may not change single sign-on.
	SSO *WorkspaceSSO
}

// WorkspaceGeneral is the workspace's name and key.
type WorkspaceGeneral struct {
	Form     Form
	Editable bool
}

// WorkspaceSSO is the OIDC single sign-on form.
type WorkspaceSSO struct {
	Form Form
	// SecretStored tells that a client secret is stored; it is never shown.
	SecretStored bool
	Methods      []Option
	// RedirectURI is what to register at the identity provider.
	RedirectURI string
	// Test is the result of "Test connection", nil before one.
	Test *SSOTest
}

// Profile is the signed-in person's own page.
type Profile struct {
	Shell
	Name, Email string
	// Account changes the person's name.
	Account  Form
	Password Form
}

// APIReference is what the API reference page loads: Swagger UI's files, the
// script that starts it, and the OpenAPI document it renders.
type APIReference struct {
	Icon, CSS, SwaggerCSS, SwaggerJS, JS string
	DocumentURL                          string
}

// Tab is one tab of a page with several views.
type Tab struct {
	Label, Href, TestID string
	Active              bool
}

// itoa formats an index for an element id.
func itoa(i int) string { return strconv.Itoa(i) }

// Webhooks is the webhooks page.
type Webhooks struct {
	Shell
	Rows []WebhookRow
}

// WebhookRow is one webhook in the list.
type WebhookRow struct {
	Name, URL, Href, Events string
	Status, Last            Badge
}

// WebhookEdit is a webhook's page, or the new webhook's form when Name is empty.
type WebhookEdit struct {
	Shell
	Name                     string
	Form                     Form
	Scopes                   []Check
	FlagEvents               []Check
	SegmentEvents            []Check
	RequestEvents            []Check
	SecretSet                bool
	SecretHint               string
	TestAction, DeleteAction string
	Log                      WebhookLog
	// Undeliverable, when set, says why no delivery to the URL can be made.
	Undeliverable string
}

// WebhookLog is a page of a webhook's deliveries; Withheld, when set, says
// why the viewer is not shown them.
type WebhookLog struct {
	Rows     []DeliveryRow
	Pager    Pager
	Withheld string
}

// DeliveryRow is one attempt in the delivery log.
type DeliveryRow struct {
	Time, Event, Latency, Excerpt string
	Status                        Badge
}

// Reviews is the reviews inbox.
type Reviews struct {
	Shell
	Items []ReviewItem
}

// ReviewItem is a change request waiting for the person's review. Href
// opens it when it is in the working environment; elsewhere the Review
// button makes its environment the working one (EnvID) and opens Next.
type ReviewItem struct {
	Flag, Reason, Env, Who, Age, When string
	Href, EnvID, Next                 string
}

// ReviewElsewhere offers to open a change request in its environment.
type ReviewElsewhere struct {
	Shell
	Env, EnvID, Next string
}
