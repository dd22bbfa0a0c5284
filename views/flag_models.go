package views

import "strconv"

// View models of the feature flag, segment and history pages.

// WorkEnv names the environment the flag and segment pages work in; Missing
// tells there is none the person may open.
type WorkEnv struct {
	Project, Name  string
	RequireComment bool
	Missing        bool
	// ProjectsHref leads to where environments are made.
	ProjectsHref string
}

// Flags is the feature flag list of the working environment.
type Flags struct {
	Shell
	Env    WorkEnv
	Filter FlagFilter
	List   FlagList
	// Create is nil when the person may not create flags.
	Create *FlagCreate
}

// FlagFilter is the search form over the flag list; the archived view is a tab.
type FlagFilter struct {
	Action string
	Query  string
	// Tags are every tag of the environment's flags; those Selected must
	// all be on a flag. TagsChosen counts them, TagsSummary names them.
	Tags        []Option
	TagsChosen  int
	TagsSummary string
	Statuses    []Option
	// Sorts are the list's orders, Sizes its page sizes.
	Sorts, Sizes []Option
	Archived     bool
	// ActiveHref, ReadyHref and ArchivedHref switch between the views:
	// active flags, those ready to remove (Ready), archived flags.
	ActiveHref, ReadyHref, ArchivedHref string
	Ready                               bool
	// Stages filter by lifecycle stage.
	Stages []Option
}

// FlagList is one page of flags.
type FlagList struct {
	Rows     []FlagRow
	Pager    Pager
	Archived bool
	// Empty explains an empty page; LastPageHref, set past the end of a list,
	// leads to its last page.
	Empty, LastPageHref string
	// Filtered says which tags narrow the list; empty when none do.
	Filtered string
	// StageNote says what the stage filter keeps; empty when none is set.
	StageNote string
}

// ServingLine is what a flag serves to its targets, one rule or everyone
// else (Label, empty when the default rule is all there is), as in
// "30% true · 70% false".
type ServingLine struct {
	Label, Text string
}

// FlagRow is one flag of the list.
type FlagRow struct {
	ID, Key, Name, Href string
	On, Archived        bool
	// Serving is what it serves when on; OffServes the value served when off.
	Serving   []ServingLine
	OffServes string
	Tags      []string
	// LastChange is when the flag last changed, LastComment that change's comment.
	LastChange, LastComment string
	// LastEvaluated says when SDKs last reported evaluating it ("never" when none has).
	LastEvaluated string
	// Trend is its evaluations of the last day, hour by hour; nil when none.
	Trend *Sparkline
	// Toggle is nil when the person may not turn the flag on or off.
	Toggle *FlagToggle
	// Stage is where the flag is in its life; nil when not known.
	Stage *FlagStage
	// InCode marks an archived flag whose key code still uses ("Archived
	// but still in code: 3 references"); empty otherwise.
	InCode string
}

// FlagStage is a flag's lifecycle stage: Stage (its value in addresses),
// Label and what it Means, the badge's Class, and whether the flag is
// ready to remove from the code.
type FlagStage struct {
	Stage, Label, Means, Class string
	ReadyToRemove              bool
}

// FlagToggle turns a flag on or off, with a comment when the environment
// requires one (then it opens as a small form first).
type FlagToggle struct {
	Form            Form
	On              bool
	CommentRequired bool
	// Row tells the toggle is in a list row, which it replaces; else it is on
	// the flag's page.
	Row bool
}

// VariationEdit is one variation in an editor; Index orders the form fields.
type VariationEdit struct {
	Index, ID, Name, Value string
}

// FlagCreate is the form that creates a flag with its variations.
type FlagCreate struct {
	Form            Form
	Types           []Option
	Variations      []VariationEdit
	CommentRequired bool
	// Open shows the form unfolded (after a problem or an edit).
	Open bool
}

// FlagPage is one flag's page: heading, tabs and the active tab.
type FlagPage struct {
	Shell
	Main FlagMain
}

// FlagMain is everything of a flag's page below the messages; htmx answers
// replace it whole, so every form on it carries the flag's new revision.
type FlagMain struct {
	Crumbs []Crumb
	// CompareHref compares the flag with another environment's; CopyHref
	// copies it to another environment.
	CompareHref, CopyHref  string
	Name, Key, Description string
	Type                   string
	On, Archived           bool
	Stage                  *FlagStage
	Tabs                   []Tab
	Targeting              *FlagTargeting
	Variations             *VariationsEditor
	Settings               *SettingsTab
	History                *History
	Triggers               *TriggersTab
	Evaluations            *EvaluationsTab
	// Experiments is the Experimentation tab: the flag's experiments.
	Experiments *ExperimentsTab
	// Evaluated says when SDKs last reported evaluating the flag and how often.
	Evaluated string
	// Tester is the "test a user" panel of the targeting tab; nil elsewhere.
	Tester *FlagTester
	// Pending lists the flag's scheduled changes on the targeting tab.
	Pending *PendingChanges
	// CodeRefs is how many places in code use the flag's key, in words ("3
	// references"), on an archived flag's page (which marks it still in
	// code) and on the Code tab, which lists them; empty otherwise.
	CodeRefs string
	Code     *CodeRefsTab
}

// CodeRefsTab lists where a flag's key is used in code, as bunting
// coderefs found it, by repository and branch.
type CodeRefsTab struct {
	Groups []CodeRefGroup
	// Count is how many places there are in all.
	Count int
}

// CodeRefGroup is one repository's branch: the commit scanned and when it
// was sent, and the places found there.
type CodeRefGroup struct {
	Repository, Branch, Commit, When string
	Places                           []CodeRefPlace
}

// CodeRefPlace is one use: the file and line ("src/a.ts:12"), and the
// lines around it.
type CodeRefPlace struct {
	Place   string
	Snippet string
}

// PendingChanges are a flag's scheduled changes, soonest first.
type PendingChanges struct {
	// Form carries a refused cancel's problem.
	Form  Form
	Items []PendingChangeItem
}

// PendingChangeItem is one scheduled change: when, by whom, what in words.
type PendingChangeItem struct {
	Title, When, Who string
	Note, Comment    string
	// Lines say the change in words, as the history page does.
	Lines []string
	// FailureReason says why it could not be applied; empty while it waits.
	FailureReason string
	// CancelAction cancels it (dismisses it once failed); empty when the
	// person may not.
	CancelAction string
	// Status, when set, names where its change request stands; Href opens
	// that request.
	Status, Href string
}

// FlagTester evaluates the flag for an end user, as the environment's SDKs would.
type FlagTester struct {
	Form Form
	// Result is set once a user was tested.
	Result *FlagTestResult
}

// FlagTestResult is what a tested user gets and why.
type FlagTestResult struct {
	Variation, Value, Reason string
	// Why explains the answer: what matched, and the user's rollout bucket.
	Why []string
}

// FlagTargeting is the targeting tab: what the flag serves in sentences, and
// the editor of the part being edited.
type FlagTargeting struct {
	On     bool
	Toggle *FlagToggle
	// Summary says part by part what the flag serves.
	Summary TargetingSummary
	// Editing is the open editor: EditTargeting, EditOff, or "" for the summary alone.
	Editing string
	// CloseHref leaves the editor for the summary.
	CloseHref string
	Off       OffVariation
	Editor    TargetingEditor
}

// The parts of a flag's targeting with an editor of their own.
const (
	EditTargeting = "targeting"
	EditOff       = "off"
)

// TargetingSummary is a flag's targeting in sentences.
type TargetingSummary struct {
	Off     SummaryPart
	Targets []SummaryPart
	Rules   []SummaryPart
	Default SummaryPart
	// AddRuleHref opens the editor at its rules; empty when not allowed.
	AddRuleHref string
}

// SummaryPart is one sentence of a summary with the editor that changes it;
// EditHref is empty when the person may not change it.
type SummaryPart struct {
	Label, Sentence string
	// EditHref opens the editor (a page without script); Show is the element
	// of the editor scrolled to.
	EditHref, Show string
	// ID names the Edit link, so the keyboard can come back to it after the
	// editor closes; FocusAfter is the field it opens, given the keyboard.
	ID, FocusAfter string
}

// OffVariation chooses what the flag serves when off.
type OffVariation struct {
	Form            Form
	Options         []Option
	Editable        bool
	CommentRequired bool
	// Current is the label of the variation served now.
	Current string
}

// TargetingEditor edits individual targets, rules and the default rule.
// Without script its add, remove and move buttons post the form and the page
// comes back changed, not saved; with script htmx does the same in place.
type TargetingEditor struct {
	Form Form
	// Unsaved tells the editor shows changes not yet saved (after an add or
	// remove button, or a refused save).
	Unsaved bool
	// Focus is the part opened for editing ("targets", "rules", "default");
	// the others are folded, still part of the form. "" opens them all.
	Focus string
	// Part is the part opened, kept through the editor's buttons, and
	// CancelFocus the Edit link that Cancel gives the keyboard back to.
	Part, CancelFocus string
	// SuggestHref answers the end users whose key or name starts with ?q=,
	// which the individual targets suggest.
	SuggestHref     string
	Editable        bool
	CommentRequired bool
	Targets         []TargetEdit
	Rules           []RuleEdit
	Default         ServeEdit
	// HasSegments tells whether segment conditions can be offered.
	HasSegments bool
	// Attributes are the user properties the environment has seen, which
	// the conditions' attribute fields suggest.
	Attributes []string
	// Now is the current time in UTC, beside the "apply at" field, whose
	// times are UTC.
	Now string
}

// Opens tells whether a part of the editor starts unfolded.
func (e TargetingEditor) Opens(part string) bool { return e.Focus == "" || e.Focus == part }

// TargetEdit lists the users served one variation.
type TargetEdit struct {
	VariationID, Label, Users string
}

// RuleEdit is one rule of a flag or a segment. Serve is nil for segment rules.
type RuleEdit struct {
	Index, ID, Name string
	Conditions      []ConditionEdit
	Serve           *ServeEdit
	First, Last     bool
}

// ConditionEdit is one condition of a rule.
type ConditionEdit struct {
	Index, ID, Property, Value string
	Ops                        []Option
	// Segments are the segments to choose from, those named selected.
	Segments []Option
}

// ServeEdit is what a rule or the default rule serves: one variation or a
// percentage rollout over all of them.
type ServeEdit struct {
	// Prefix starts the names of its fields ("rule.0", "default").
	Prefix      string
	Choices     []Option
	Rollout     bool
	Percents    []PercentEdit
	DispatchKey string
	Error       string
}

// PercentEdit is one variation's share of a rollout, in percent with up to
// two decimals; Invalid when the serve's Error is about it.
type PercentEdit struct {
	VariationID, Label, Value string
	Invalid                   bool
}

// VariationsEditor edits a flag's type and variations.
type VariationsEditor struct {
	Form            Form
	Editable        bool
	CommentRequired bool
	Types           []Option
	Variations      []VariationEdit
}

// SettingsTab is a flag's or a segment's name, description and tags, and its archival.
type SettingsTab struct {
	// Name, Description and Tags are nil when the person may not change them.
	Name, Description, Tags *Form
	// Clone copies a flag; nil for segments and when not allowed.
	Clone           *Form
	CommentRequired bool
	Facts           []Fact
	Archived        bool
	// ArchiveHref, RestoreHref and DeleteHref are empty when not offered.
	ArchiveHref, RestoreHref, DeleteHref string
	// Blocked says why archiving or deleting is not offered where the
	// person may otherwise do it (a segment that flags use).
	Blocked string
	// Scopes changes where a shared segment applies; nil for flags, other
	// segments and those who may not change them.
	Scopes *SegmentScopes
}

// Fact is one labelled value shown read-only.
type Fact struct {
	Label, Value string
	Code         bool
}

// History is one page of recorded changes with their differences.
type History struct {
	Entries []HistoryEntry
	Pager   Pager
	// Region is the id of the element paging replaces.
	Region string
	Empty  string
}

// HistoryEntry is one recorded change.
type HistoryEntry struct {
	When, Who, Operation, Comment string
	// Kind, Name and Href say what changed, on the environment's audit log.
	Kind, Name, Href string
	// Lines say the change in words, one line per thing changed.
	Lines   []string
	Changes []FieldChange
	// Summary opens the JSON diff and names the changed fields.
	Summary string
}

// FieldChange is how one field changed: Old and New for a plain value, Lines
// for a structured one.
type FieldChange struct {
	Field    string
	Old, New string
	Lines    []DiffLine
}

// DiffLine is one line of a line diff; Kind is "same", "added", "removed" or
// "skip" (unchanged lines left out).
type DiffLine struct {
	Kind, Text string
}

// ChangeConfirm asks before archiving, restoring or deleting a flag or a
// segment, with the comment the change is recorded with.
type ChangeConfirm struct {
	Shell
	Crumbs       []Crumb
	Heading      string
	Consequences []string
	// Form posts the change; its Action is empty when the person may not.
	Form            Form
	CommentRequired bool
	Button          string
	Danger          bool
	CancelHref      string
}

// Segments is the segment list of the working environment.
type Segments struct {
	Shell
	Env    WorkEnv
	Filter SegmentFilter
	List   SegmentList
	// Create is nil when the person may not create segments.
	Create *SegmentCreate
}

// SegmentFilter searches the segments by name; the archived view is a tab.
type SegmentFilter struct {
	Action                   string
	Query                    string
	Archived                 bool
	ActiveHref, ArchivedHref string
}

// SegmentList is one page of segments.
type SegmentList struct {
	Rows     []SegmentRow
	Pager    Pager
	Archived bool
	Empty    string
}

// SegmentRow is one segment of the list.
type SegmentRow struct {
	Name, Key, Href, Type, Description string
	Users, Rules                       string
	Tags                               []string
	Updated                            string
}

// SegmentCreate is the form that creates a segment.
type SegmentCreate struct {
	Form            Form
	Types           []Option
	Scopes          ScopePicker
	CommentRequired bool
	Open            bool
}

// ScopePicker chooses where a shared segment applies, from the
// organization's projects and environments: checkboxes named "scopes" whose
// values are the scope names the store takes.
type ScopePicker struct {
	// Everywhere is every environment of every project.
	Everywhere Check
	Projects   []ScopeProject
	// Others are scopes the segment has that no checkbox above stands for
	// (a project the person cannot see, "every env called prod"), checked,
	// so that saving keeps them unless unchecked.
	Others []Check
	// Here names the working environment, which the choice must include.
	Here string
}

// ScopeProject is one project in a ScopePicker: all its environments, or
// some of them.
type ScopeProject struct {
	Name string
	All  Check
	Envs []Check
}

// SegmentScopes changes where a shared segment applies, on its settings tab.
type SegmentScopes struct {
	Form            Form
	Picker          ScopePicker
	CommentRequired bool
}

// SegmentPage is one segment's page.
type SegmentPage struct {
	Shell
	Main SegmentMain
}

// SegmentMain is everything of a segment's page below the messages.
type SegmentMain struct {
	Crumbs                 []Crumb
	Name, Key, Description string
	Type                   string
	Scopes                 []string
	Archived               bool
	Tabs                   []Tab
	Targeting              *SegmentTargeting
	Usage                  *SegmentUsage
	Settings               *SettingsTab
	History                *History
}

// SegmentTargeting edits who is in a segment: listed users and rules.
type SegmentTargeting struct {
	Form            Form
	Editable        bool
	CommentRequired bool
	Rules           []RuleEdit
	// Attributes are the user properties the conditions suggest.
	Attributes []string
	// SuggestHref answers the end users the user-key fields suggest.
	SuggestHref string
}

// SegmentUsage lists the flags whose rules name the segment; Hidden says how
// many more do in environments the person may not open ("" for none).
type SegmentUsage struct {
	Flags  []FlagRef
	Hidden string
}

// FlagRef is a flag that uses a segment; Href is empty for flags of other
// environments.
type FlagRef struct {
	Name, Key, Env, Href string
	Archived             bool
}

// AuditLog is the environment's history of changes.
type AuditLog struct {
	Shell
	Env     WorkEnv
	Filter  Form
	Types   []Option
	History History
}

// approvalsText says how many approvals a change needs.
func approvalsText(n int) string {
	if n == 1 {
		return "1 approval"
	}
	return strconv.Itoa(n) + " approvals"
}

// requestToggleLabel is the toggle's button where turning a flag on or off
// needs approval.
func requestToggleLabel(on bool) string {
	if on {
		return "Request to turn off"
	}
	return "Request to turn on"
}

// EndUserSuggestion is an end user a user-key field suggests.
type EndUserSuggestion struct {
	Key, Name string
}
