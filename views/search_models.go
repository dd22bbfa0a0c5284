package views

// Search is the search page: the search typed and what it found.
type Search struct {
	Shell
	Results SearchResults
}

// SearchResults is what one search found: flags and segments of the working
// environment, and pages, each list bounded.
type SearchResults struct {
	// Query is the search as typed; empty before anything is typed.
	Query string
	// Env names the environment the flags and segments were searched in;
	// empty when the person can open none.
	Env string
	// Error says why the search could not run (too long, say).
	Error    string
	Flags    SearchGroup
	Segments SearchGroup
	Pages    SearchGroup
}

// Found tells whether anything at all was found.
func (r SearchResults) Found() bool {
	return len(r.Flags.Hits)+len(r.Segments.Hits)+len(r.Pages.Hits) > 0
}

// SearchGroup is one kind of result, with a link to all of them when more
// matched than are listed.
type SearchGroup struct {
	Hits []SearchHit
	// More, when not empty, leads to the full list of matches.
	More, MoreLabel string
}

// SearchHit is one result: a link, with its key or what it is.
type SearchHit struct {
	Label, Detail, Href string
}
