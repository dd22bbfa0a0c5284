package views

// OrganizationNew is the page that creates an organization.
type OrganizationNew struct {
	Shell
	// Form is nil when the person may not create organizations.
	Form *Form
}

// Guide is the first-run guide of an organization: its three steps, each
// done, to do, or out of the person's reach.
type Guide struct {
	Shell
	OrgName string
	// Project is step 1's form; nil once there is a project or when the
	// person may not create one (then NoProject says why).
	Project *Form
	// AskEnvironments: the form names the environments (a new
	// organization's onboarding); otherwise the project gets Prod and Dev.
	AskEnvironments bool
	// Env names the working environment ("Project / Env") once step 1 is done.
	Env       string
	NoProject string
	// Flag is step 2's form; nil once the environment has a flag (FlagKey)
	// or when the person may not create one (NoFlag says why).
	Flag    *Form
	FlagKey string
	NoFlag  string
	// Connect is step 3; nil until there is an environment.
	Connect *GuideConnect
}

// GuideConnect is step 3: snippets filled with the environment's URL and
// secrets, and the live check.
type GuideConnect struct {
	// SDKs choose the snippet shown; Snippets holds the chosen one.
	SDKs     []Tab
	Snippets []Snippet
	// SecretNote explains a placeholder used where no secret could be filled in.
	SecretNote string
	Check      GuideCheck
	// Relay links to the Relay proxies page when the person may see it:
	// applications with many SDKs connect them to a relay.
	Relay string
}

// Snippet is one ready piece of code.
type Snippet struct {
	// Choice names the snippet in the SDK picker.
	ID, Choice, Title, Install, Code string
}

// GuideCheck is the live check: waiting until the environment sees its
// first SDK request, then received.
type GuideCheck struct {
	Href     string
	Received bool
	// At is when it was received.
	At string
}
