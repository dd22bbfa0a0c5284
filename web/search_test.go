package web_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// hits lists a page's search results of one kind as "label → href".
func hits(p *page, kind string) []string {
	var out []string
	for _, n := range p.findAll("search-hit-" + kind) {
		out = append(out, strings.Join(strings.Fields(text(n)), " ")+" → "+attr(n, "href"))
	}
	return out
}

// The search page finds flags by name or key (the one whose key is typed
// first), segments, and pages by name or another word for them; it bounds
// each list with a link to the rest, answers htmx with the results alone,
// names an over-long search, and shows nobody what they may not read.
func TestSearchPage(t *testing.T) {
	t.Parallel()
	a, _, env := flagApp(t)
	a.makeFlag(env, flagstore.FlagInput{Name: "New checkout v2", Key: "checkout-v2"})
	a.makeFlag(env, flagstore.FlagInput{Name: "Checkout", Key: "checkout"})
	a.makeFlag(env, flagstore.FlagInput{Name: "Dark mode", Key: "dark-mode"})
	for i := range 8 {
		a.makeFlag(env, flagstore.FlagInput{Name: fmt.Sprintf("Promo %d", i), Key: fmt.Sprintf("promo-%d", i)})
	}
	beta := a.makeSegment(env, "Beta testers", "beta")
	b := a.signedIn(ownerEmail, ownerPassword)

	p := b.get("/search?q=checkout").status(http.StatusOK)
	if got, want := hits(p, "flag"), []string{"Checkout checkout → /flags/checkout", "New checkout v2 checkout-v2 → /flags/checkout-v2"}; !slices.Equal(got, want) {
		t.Errorf("flags found for checkout: %q, want %q", got, want)
	}
	if got := b.get("/search?q=beta").status(http.StatusOK); !slices.Equal(hits(got, "segment"), []string{"Beta testers beta → /segments/" + beta.ID.String()}) {
		t.Errorf("segments found for beta: %q", hits(got, "segment"))
	}
	if got := hits(b.get("/search?q=MEMBERS"), "page"); !slices.Equal(got, []string{"Members Administration → /members"}) {
		t.Errorf("pages found for MEMBERS: %q", got)
	}
	if got := hits(b.get("/search?q=sso"), "page"); !slices.Equal(got, []string{"Workspace Administration → /workspace"}) {
		t.Errorf("pages found for sso: %q", got)
	}
	p = b.get("/search?q=promo")
	if n := len(hits(p, "flag")); n != 6 || !strings.Contains(p.body, `href="/flags?q=promo"`) {
		t.Errorf("promo: %d flags listed, want 6 and a link to all of them", n)
	}
	if p := b.get("/search?q=zzz"); p.text("search-empty") != "Nothing matches “zzz”." {
		t.Errorf("no match: %q", p.text("search-empty"))
	}
	p = b.get("/search?q=" + strings.Repeat("x", 200)).status(http.StatusBadRequest)
	if got := p.text("search-error"); got != "Search for at most 128 characters." {
		t.Errorf("long search: %q", got)
	}

	// htmx, from the dialog: the results and their count, not a page.
	req, _ := http.NewRequest(http.MethodGet, a.srv.URL+"/search?q=dark", nil)
	req.Header.Set("HX-Request", "true")
	h := b.do(req).status(http.StatusOK)
	if h.has("switcher") || len(hits(h, "flag")) != 1 || !strings.Contains(h.body, `id="search-status" hx-swap-oob="true">1 result.`) {
		t.Errorf("htmx answer: %s", h.body)
	}

	// Someone who can open no environment finds no flag and no IAM page;
	// a reader finds flags but not the members.
	a.addMember("nobody@example.com")
	nobody := a.signedIn("nobody@example.com", memberPassword)
	if p := nobody.get("/search?q=checkout").status(http.StatusOK); len(hits(p, "flag")) != 0 {
		t.Errorf("a member without access finds %q", hits(p, "flag"))
	}
	a.addMember("reader@example.com", a.readerPolicy())
	reader := a.signedIn("reader@example.com", memberPassword)
	if p := reader.get("/search?q=checkout"); len(hits(p, "flag")) != 2 {
		t.Errorf("a reader finds %q", hits(p, "flag"))
	}
	if p := reader.get("/search?q=members"); len(hits(p, "page")) != 0 {
		t.Errorf("a reader finds the pages %q", hits(p, "page"))
	}
}
