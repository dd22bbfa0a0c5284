package views

// CompareEnvs compares the working environment's flags with another
// environment's, part by part, and starts copying chosen flags there.
type CompareEnvs struct {
	Shell
	Source string
	// Targets are the environments to compare with; Target is the chosen
	// one's name, "" until one is chosen.
	Targets          []Option
	Target, TargetID string
	Query            string
	Rows             []CompareRow
	Pager            Pager
	Empty            string
}

// CompareRow is one flag of the comparison.
type CompareRow struct {
	ID, Key, Name, Href string
	// Missing: the target has no live flag of this key.
	Missing bool
	Parts   []ComparePart
}

// ComparePart says whether one part of a flag differs in the target.
type ComparePart struct {
	Label   string
	Differs bool
}

// FlagCompare shows one flag in two environments side by side, and copies
// chosen settings to the target.
type FlagCompare struct {
	Shell
	Crumbs           []Crumb
	Name, Key        string
	Source           string
	Targets          []Option
	Target, TargetID string
	// Missing: the target has no flag of this key; CopyHref copies it there.
	Missing  bool
	CopyHref string
	Rows     []CompareSide
	Copy     *CopySettings
}

// CompareSide is one part of the flag on both sides, in words.
type CompareSide struct {
	Part           string
	Source, Target []string
	Differs        bool
}

// CopySettings chooses settings to copy, previews the change and confirms it.
type CopySettings struct {
	// Action is the page itself: choosing settings previews them (GET).
	Action  string
	Choices []CopyChoice
	// TargetsMode and RulesMode choose overwrite or append.
	TargetsMode, RulesMode []Option
	Preview                *CopyPreview
	Error                  string
}

// CopyChoice is one setting that may be copied.
type CopyChoice struct {
	Name, Label, Hint string
	Checked, Disabled bool
}

// CopyPreview is what the copy would change, and the confirming form.
type CopyPreview struct {
	Lines   []string
	Comment string
	// Refused says why the change would be refused; NoChange that it
	// changes nothing. Either leaves out the confirm button.
	Refused  string
	NoChange bool
	Form     Form
	Hidden   []Option
}

// CopyFlags pre-checks copying flags to another environment and confirms it.
type CopyFlags struct {
	Shell
	Crumbs           []Crumb
	Source           string
	Targets          []Option
	Target, TargetID string
	FlagIDs          []string
	Checks           []CopyCheck
	// Form confirms the copy; nil when a check refuses it (Blocked says why).
	Form    *Form
	Blocked string
	Error   string
}

// CopyCheck is one flag's pre-check, in words.
type CopyCheck struct {
	Key, Name string
	OK        bool
	Notes     []string
}
