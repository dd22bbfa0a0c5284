package views

// TriggersTab is a flag's triggers tab: secret URLs that turn the flag on or
// off, for alerting systems.
type TriggersTab struct {
	// Create makes a trigger; nil when the person may not.
	Create  *Form
	Actions []Option
	// Revealed is the URL of a trigger just made or reset, shown this once.
	Revealed *TriggerURL
	Rows     []TriggerRow
	CSRF     string
}

// TriggerURL is a trigger's whole URL and a command that calls it.
type TriggerURL struct {
	Name, URL, Curl string
}

// TriggerRow is one trigger in the list. The action addresses are empty
// when the person may not manage it.
type TriggerRow struct {
	ID, Name, Action, Token string
	Enabled                 bool
	LastTriggered           string
	Count                   int
	StatusAction            string
	ResetAction             string
	DeleteAction            string
}
