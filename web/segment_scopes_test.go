package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"golang.org/x/net/html"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// checkedScopes are the scope checkboxes checked inside root.
func checkedScopes(root *html.Node) []string {
	var out []string
	for n := range root.Descendants() {
		if n.Type == html.ElementNode && n.Data == "input" && attr(n, "name") == "scopes" && hasAttr(n, "checked") {
			out = append(out, attr(n, "value"))
		}
	}
	return out
}

// A shared segment's settings show its scopes checked in the picker of
// projects and environments (an equivalent name checks its box and is kept
// as it is; a scope no box stands for is offered checked), and saving the
// boxes checked stores their scope names; a choice without the working
// environment is refused and marks the boxes.
func TestSegmentScopesPicker(t *testing.T) {
	t.Parallel()
	a, web, env := flagApp(t)
	_, err := a.st.Projects().CreateProject(t.Context(), a.ownerActor(), core.ProjectInput{Name: "Mobile", Key: "mobile"})
	must(t, err)
	mobile := a.project("mobile")
	const org = "organization/default-organization"
	sg, err := a.st.Segments().CreateSegment(t.Context(), a.ownerActor(), env.ID, segments.SegmentInput{Name: "Beta", Key: "beta",
		Type: flagstore.SegmentShared, Scopes: []string{org + ":project/web", org + ":project/*:env/qa"}})
	must(t, err)
	b := a.signedIn(ownerEmail, ownerPassword)
	p := b.get(segmentPath(sg) + "/settings").status(http.StatusOK)
	form := p.must("segment-scopes-form")
	if got, want := checkedScopes(form), []string{org + ":project/web", org + ":project/*:env/qa"}; !slices.Equal(got, want) {
		t.Errorf("checked %q, want %q", got, want)
	}
	if n := len(p.findAll("scope-project")); n != 2 {
		t.Errorf("%d projects offered, want 2", n)
	}
	if other := find(form, "scope-other"); other == nil || attr(other, "value") != org+":project/*:env/qa" {
		t.Errorf("the scope no box stands for is not offered as it is")
	}

	// Web's working environment and Mobile's second one.
	envScope := func(pr core.Project, e core.Environment) string { return org + ":project/" + pr.Key + ":env/" + e.Key }
	want := []string{envScope(web, env), envScope(mobile, mobile.Environments[1])}
	vals := url.Values{"scopes": want}
	b.post(segmentPath(sg)+"/scopes", vals).status(http.StatusOK)
	if got := a.segment(env, sg).Scopes; !slices.Equal(got, want) {
		t.Errorf("saved %q, want %q", got, want)
	}
	if got := checkedScopes(b.get(segmentPath(sg) + "/settings").must("segment-scopes-form")); !slices.Equal(got, want) {
		t.Errorf("checked after saving %q, want %q", got, want)
	}

	// Only Mobile: the working environment is left out.
	p = b.post(segmentPath(sg)+"/scopes", url.Values{"scopes": {org + ":project/mobile:env/*"}}).status(http.StatusBadRequest)
	if got := p.text("error-scopes"); got != "Choose where it can be used, including the environment you work in." {
		t.Errorf("problem %q", got)
	}
	for n := range p.must("segment-scopes-form").Descendants() {
		if n.Type == html.ElementNode && attr(n, "name") == "scopes" && attr(n, "aria-invalid") != "true" {
			t.Fatalf("a scope box is not marked invalid")
		}
	}
	if got := a.segment(env, sg).Scopes; !slices.Equal(got, want) {
		t.Errorf("a refused choice changed the scopes to %q", got)
	}

	// Five thousand distinct scopes are refused, shown as a page of at
	// most one more than a segment may have.
	many := make([]string, 5000)
	for i := range many {
		many[i] = fmt.Sprintf("s%d", i)
	}
	p = b.post(segmentPath(sg)+"/scopes", url.Values{"scopes": many}).status(http.StatusBadRequest)
	if n := len(p.findAll("scope-other")); n > targeting.MaxTags+1 {
		t.Errorf("a refusal of %d scopes offers %d of them back, want at most %d", len(many), n, targeting.MaxTags+1)
	}
	if got := a.segment(env, sg).Scopes; !slices.Equal(got, want) {
		t.Errorf("too many scopes changed them to %d scopes", len(got))
	}
}
