package views

// EndUsers is the list of the working environment's end users.
type EndUsers struct {
	Shell
	Env    WorkEnv
	Search string
	List   EndUserList
}

// EndUserList is one keyset page of end users; the pager links carry the cursors.
type EndUserList struct {
	Rows  []EndUserRow
	Empty string
	Pager Pager
	// Error says why the page asked for could not be shown.
	Error string
	// Bound is the notice shown when the environment keeps the most end
	// users it may: new keys are dropped.
	Bound string
}

// EndUserRow is one end user in the list.
type EndUserRow struct {
	Key, Name, Href     string
	FirstSeen, LastSeen string
	Properties          int
}

// EndUserPage is one end user's page: properties, what every flag serves
// them and why, and the segments they are in.
type EndUserPage struct {
	Shell
	Crumbs              []Crumb
	Key, Name           string
	FirstSeen, LastSeen string
	Properties          []EndUserPropertyRow
	Flags               []EndUserFlagRow
	// MoreFlags says how many flags are not listed.
	MoreFlags string
	Segments  []EndUserSegmentRow
}

// EndUserPropertyRow is one property of an end user.
type EndUserPropertyRow struct{ Name, Value string }

// EndUserFlagRow is what one flag serves the user, and why.
type EndUserFlagRow struct {
	Key, Name, Href string
	Variation       string
	ServedBy        string
	Why             []string
}

// EndUserSegmentRow is a segment the user is in.
type EndUserSegmentRow struct{ Name, Type, Href string }
