package views

// LoginSSO is the sign-in page's "Sign in with SSO" form.
type LoginSSO struct {
	Form Form
	// AskWorkspace: with several workspaces the person names theirs by key.
	AskWorkspace bool
}

// SSOTest is what "Test connection" found at the identity provider.
type SSOTest struct {
	// OK: discovery answered and signing keys were found.
	OK bool
	// Summary is one sentence on the outcome.
	Summary string
	Facts   []SSOFact
}

// SSOFact is one finding of a connection test; Warn marks what needs a look.
type SSOFact struct {
	Label, Value string
	Warn         bool
}
