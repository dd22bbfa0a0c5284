package views

// RelayProxies is the organization's relay proxies page.
type RelayProxies struct {
	Shell
	// Manage shows the controls that change relay proxies.
	Manage bool
	Rows   []RelayProxyRow
}

// RelayProxyRow is one relay proxy in the list.
type RelayProxyRow struct {
	Name, Href, Key, Serves, Agents string
}

// RelayProxyEdit is a relay proxy's page, or the new one's form when Name
// is empty.
type RelayProxyEdit struct {
	Shell
	Name   string
	Key    string // masked
	Manage bool
	Form   Form
	// AllEnvs is whether the key serves every environment; Scopes are the
	// environments to choose from.
	AllEnvs bool
	Scopes  []Check
	// Agents are the manual agents, AgentForm adds one; AutoAgents
	// registered themselves.
	Agents       []RelayAgentRow
	AgentForm    Form
	AutoAgents   []RelayAutoAgentRow
	DeleteAction string
}

// RelayAgentRow is a manual agent: where it is, its last sync, and the
// actions on it.
type RelayAgentRow struct {
	ID, Name, Host, LastSync, Serves, DataVersion string
	SyncAction, RemoveAction                      string
}

// RelayAutoAgentRow is an auto agent and what it last reported.
type RelayAutoAgentRow struct {
	ID, SyncState, LastSync, DataVersion, Reported, Serves string
	State                                                  Badge
	// RemoveAction is set when the agent has not reported for five
	// minutes: only a stale agent may be removed.
	RemoveAction string
}

// RelayProxyKey shows a new relay proxy's key, once.
type RelayProxyKey struct {
	Shell
	Name, Key, Href, BaseURL string
}
