package views

// RefKind names one kind of thing whose changes the audit log records, as
// the pages say it. The store records each change under a reference type
// (FeatBit's names, which the API answers unchanged); the pages never show
// those names, only these labels.
type RefKind struct {
	// RefType is the store's name of the kind.
	RefType string
	// Label names one entry's subject; Plural names the filter for them.
	Label, Plural string
}

// RefKinds are every kind the audit log records, in the order filters list them.
var RefKinds = []RefKind{
	{RefType: "FeatureFlag", Label: "Feature flag", Plural: "Feature flags"},
	{RefType: "Segment", Label: "Segment", Plural: "Segments"},
	{RefType: "FlagChangeRequest", Label: "Change request", Plural: "Change requests"},
	{RefType: "FlagSchedule", Label: "Scheduled change", Plural: "Scheduled changes"},
	{RefType: "FlagTrigger", Label: "Trigger", Plural: "Triggers"},
	{RefType: "CodeReferences", Label: "Code references", Plural: "Code references"},
	{RefType: "EndUser", Label: "End user", Plural: "End users"},
	{RefType: "EndUserProperty", Label: "End-user property", Plural: "End-user properties"},
	{RefType: "Experiment", Label: "Experiment", Plural: "Experiments"},
	{RefType: "ExperimentMetric", Label: "Experiment metric", Plural: "Experiment metrics"},
	{RefType: "Environment", Label: "Environment", Plural: "Environments"},
	{RefType: "EnvSecret", Label: "Environment secret", Plural: "Environment secrets"},
	{RefType: "Project", Label: "Project", Plural: "Projects"},
	{RefType: "Webhook", Label: "Webhook", Plural: "Webhooks"},
	{RefType: "Member", Label: "Member", Plural: "Members"},
	{RefType: "Group", Label: "Group", Plural: "Groups"},
	{RefType: "Policy", Label: "Policy", Plural: "Policies"},
	{RefType: "AccessToken", Label: "Access token", Plural: "Access tokens"},
	{RefType: "Organization", Label: "Organization", Plural: "Organizations"},
	{RefType: "Workspace", Label: "Workspace", Plural: "Workspaces"},
	{RefType: "User", Label: "Account", Plural: "Accounts"},
}

// RefKindOf returns the kind recorded as refType; a kind not in the table
// (recorded by a later version) is called "Change", never by its inner name.
func RefKindOf(refType string) RefKind {
	for _, k := range RefKinds {
		if k.RefType == refType {
			return k
		}
	}
	return RefKind{RefType: refType, Label: "Change", Plural: "Other changes"}
}
