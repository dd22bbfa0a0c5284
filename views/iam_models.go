package views

// View models of the IAM pages: members, groups, policies, the organization's
// settings, and the statement editor that policies and Service tokens share.

// Hidden is a hidden form field; row actions post the state of their list
// (search, "show all", page) so the list answers where it was.
type Hidden struct {
	Name, Value string
}

// Check is one checkbox of a list of choices.
type Check struct {
	Value, Label, Hint string
	Checked            bool
}

// IAMList is one IAM list on a page: its search, its "show all" switch, its
// rows with their add or remove buttons, and its pager. It is the region htmx
// swaps when the list is searched, paged or changed.
type IAMList struct {
	// ID is the region's id and test id.
	ID          string
	Title, Hint string
	// Href is the page the list belongs to; search and paging load it.
	Href string
	// Param names the list's query parameters: Param+"q" for the search,
	// Param+"all" for the switch, Param+"page" for the page.
	Param       string
	Search      string
	SearchLabel string
	// AllLabel names the "show all" switch; empty when the list has none.
	AllLabel string
	All      bool
	// AttachedLabel marks the attached rows of a "show all" list.
	AttachedLabel string
	// OOB names other regions a row action's answer also replaces
	// ("#flash" and, say, a list that depends on this one).
	OOB string
	// Keep are the page's other parameters (such as its tab) that search and
	// paging carry along.
	Keep  []Hidden
	Rows  []IAMRow
	Pager Pager
	Empty string
	CSRF  string
	// State is what row actions post back so the list stays where it was.
	State []Hidden
}

// IAMRow is one member, group or policy in an IAM list.
type IAMRow struct {
	// Key tells rows apart in tests (an email or a name).
	Key              string
	Title, Sub, Href string
	Badges           []Badge
	// Attached marks rows that hold the attachment, in a "show all" list.
	Attached bool
	// Action is where the row's add or remove button posts; empty when the
	// row has none. Remove tells which of the two it is.
	Action string
	Remove bool
}

// Badge is a small label, Kind being its colour ("gray", "blue", "green", "amber").
type Badge struct {
	Label, Kind, Href string
}

// Members is the members page: the list and the form that adds one.
type Members struct {
	Shell
	Add  MemberAdd
	List MemberList
}

// MemberAdd adds a member by email and, right after, shows the new user's
// initial password to the inviter, this once.
type MemberAdd struct {
	Form     Form
	Policies []Check
	Groups   []Check
	// More tells that the organization has more policies or groups than
	// the form lists; they can be given on the member's page.
	More bool
	// Added is the member just added, set only in the answer to the addition.
	Added *AddedMember
}

// AddedMember is a member just added, with their initial password when a
// new account was made for them.
type AddedMember struct {
	Email, Href, Password string
}

// MemberList is one page of the organization's members, searchable.
type MemberList struct {
	Search string
	Rows   []MemberRow
	Pager  Pager
}

// MemberRow is one member in the members list.
type MemberRow struct {
	Name, Email, Href string
	Groups            []Badge
}

// Member is one member's page: their groups, direct and inherited policies.
type Member struct {
	Shell
	Crumbs      []Crumb
	Name, Email string
	Groups      IAMList
	Policies    IAMList
	Inherited   IAMList
	RemoveHref  string
}

// Groups is the groups page: the list and the form that creates one.
type Groups struct {
	Shell
	Create Form
	List   GroupList
}

// GroupList is one page of the organization's groups, searchable.
type GroupList struct {
	Search string
	Rows   []GroupRow
	Pager  Pager
}

// GroupRow is one group in the groups list.
type GroupRow struct {
	Name, Description, Href string
}

// Group is one group's page: its settings, members and policies.
type Group struct {
	Shell
	Crumbs     []Crumb
	Name       string
	Settings   Form
	Members    IAMList
	Policies   IAMList
	DeleteHref string
}

// Policies is the policies page: the list and the form that creates one.
type Policies struct {
	Shell
	Create Form
	List   PolicyList
}

// PolicyList is one page of policies, built-in ones first, searchable.
type PolicyList struct {
	Search string
	Rows   []PolicyRow
	Pager  Pager
}

// PolicyRow is one policy in the policies list.
type PolicyRow struct {
	Name, Key, Description, Href string
	BuiltIn                      bool
}

// Policy is one policy's page, showing one of its tabs.
type Policy struct {
	Shell
	Crumbs                 []Crumb
	Name, Key, Description string
	BuiltIn                bool
	Tabs                   []Tab
	// One of these is set, by the tab shown.
	Statements *PolicyStatements
	Members    *IAMList
	Groups     *IAMList
	Settings   *PolicySettings
	CloneHref  string
}

// PolicyStatements is the statements tab: the editor, in a form unless the
// policy is built-in.
type PolicyStatements struct {
	// FormID is the editor's form, which the check's controls belong to.
	FormID string
	Form   Form
	Editor StatementEditor
	Check  AccessCheck
	// CheckAction is where the check's form goes: the policy's page.
	CheckAction string
}

// PolicySettings is the settings tab: name and description, and deletion.
type PolicySettings struct {
	// Form is nil for built-in policies, shown read-only.
	Form       *Form
	DeleteHref string
}

// PolicyClone is the page that clones a policy.
type PolicyClone struct {
	Shell
	Crumbs     []Crumb
	Source     string
	Form       Form
	CancelHref string
}

// KeyCheck tells, under a policy key field, whether the key is free.
type KeyCheck struct {
	ID   string
	Text string
	Used bool
}

// Organization is the organization's settings page.
type Organization struct {
	Shell
	Key      string
	Form     Form
	Editable bool
	// Defaults is nil when the person may not change the default
	// permissions of new members.
	Defaults *OrgDefaults
	// NewHref and DeleteHref lead to creating another organization and to
	// deleting this one; empty for those who may not.
	NewHref, DeleteHref string
}

// OrgDefaults are the policies and groups new members get when added without any.
type OrgDefaults struct {
	Policies []Check
	Groups   []Check
	More     bool
	// Keep carries default ids the lists do not show, so saving keeps them.
	Keep []Hidden
}

// StatementEditor edits a list of statements inside a form: per statement
// its resource type, effect, actions and resource patterns, with a helper
// that builds patterns from the organization's projects and environments.
// Its fields are named st-{index}-…; its buttons post op.
type StatementEditor struct {
	// Prefix starts the ids of the editor's controls, unique on the page.
	Prefix     string
	Statements []StatementForm
	ReadOnly   bool
	// Presets offers ready sets of statements; nil when read-only.
	Presets *PresetPicker
	// Error explains why the statements were refused, when they were.
	Error string
}

// StatementForm is one statement in the editor.
type StatementForm struct {
	// Index names the statement's fields; Number is its position for people.
	Index, Number, ID string
	Types             []Option
	Effects           []Option
	// TypeLabel and EffectLabel name the chosen type and effect (read-only view).
	TypeLabel string
	Allow     bool
	Actions   []Check
	Resources []string
	// Scopes are the patterns the helper offers for the statement's type.
	Scopes []OptionGroup
	// Tagged shows the tags field of the helper (flags and segments).
	Tagged bool
	Tags   string
	// Problems say what is wrong with this statement, when it was refused,
	// by field: "effect", "resourceType", "actions", "resources".
	Problems map[string]string
	// Hint says what else the statement needs to be usable.
	Hint string
}

// PresetPicker adds a preset's statements: a kind, and the project or
// environment it is for.
type PresetPicker struct {
	Kinds, Projects []Option
	Envs            []OptionGroup
}

// AccessCheck answers "what does this allow?" for an action and a resource
// chosen from lists.
type AccessCheck struct {
	Action    string
	Actions   []OptionGroup
	Resources []OptionGroup
	// Answered tells a pair was checked; Allowed and Why are its answer.
	Answered, Allowed bool
	Why               string
	// Unsaved tells the answer is for statements in the editor that differ
	// from the saved ones.
	Unsaved bool
	// FormID is the statement editor's form, whose statements a check
	// posts; empty for a read-only policy, checked by its saved statements.
	FormID string
}

// AccessToken is one access token's page: rename it and, for a Service
// token, edit its statements.
type AccessToken struct {
	Shell
	Crumbs                      []Crumb
	Name, Type, Status, Preview string
	Form                        Form
	// Editor is nil for Personal tokens, and read-only for those who may not
	// manage IAM.
	Editor *StatementEditor
}
