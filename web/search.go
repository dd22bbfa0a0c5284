package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/views"
)

// searchHits bounds each kind of result: the search is for going somewhere,
// and the lists it links to page through the rest.
const searchHits = 6

// pageWords are other words people use for the navigation's pages, by
// address, so "settings" finds the organization and "sso" the workspace.
var pageWords = map[string]string{
	"/flags":           "feature flags toggles switches",
	"/change-requests": "reviews change requests approvals",
	"/segments":        "segments audiences",
	"/end-users":       "end users contexts",
	"/experiments":     "experiments a/b tests metrics results",
	"/audit-log":       "audit log history changes",
	"/projects":        "projects environments secrets sdk keys",
	"/access-tokens":   "access tokens api keys",
	"/members":         "members people users invite team",
	"/groups":          "groups teams",
	"/policies":        "policies permissions roles access",
	"/organization":    "organization settings default permissions",
	"/webhooks":        "webhooks integrations notifications",
	"/relay-proxies":   "relay proxies agents edge keys",
	"/workspace":       "workspace settings sso oidc single sign-on",
	"/profile":         "profile account password",
	"/docs":            "api reference documentation openapi",
}

// search finds flags and segments of the working environment by name or
// key, and pages by name: the search dialog's answer for htmx (its results
// and a status line), the search page otherwise.
func (p *pages) search(c echo.Context) error {
	q := strings.TrimSpace(c.QueryParam("q"))
	// The pages found are the navigation's: the page's shell has it, the
	// dialog's answer asks for it alone.
	var shell views.Shell
	var err error
	if isHTMX(c) {
		shell.Nav, err = p.navGroups(c, "")
	} else {
		shell, err = p.shell(c, "Search", "")
	}
	if err != nil {
		return err
	}
	r, err := p.searchResults(c, q, shell.Nav)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if r.Error != "" {
		status = http.StatusBadRequest
	}
	if isHTMX(c) {
		return render(c, status, views.SearchResultsView(r), views.SearchStatus(r))
	}
	return render(c, status, views.SearchPage(views.Search{Shell: shell, Results: r}))
}

// searchResults runs a search through the store's own list searches, which
// check that the person may read the environment; pages come from their
// navigation, which holds only what they may open.
func (p *pages) searchResults(c echo.Context, q string, nav []views.NavGroup) (views.SearchResults, error) {
	r := views.SearchResults{Query: q}
	if q == "" {
		return r, nil
	}
	if w, ok := workEnvOf(c); ok {
		r.Env = w.projectName + " / " + w.name
		var err error
		if r.Flags, err = p.searchFlags(c, w, q); err != nil {
			return searchRefused(r, err)
		}
		if r.Segments, err = p.searchSegments(c, w, q); err != nil {
			return searchRefused(r, err)
		}
	}
	lq := strings.ToLower(q)
	for _, g := range nav {
		for _, item := range g.Items {
			if strings.Contains(strings.ToLower(item.Label)+" "+pageWords[item.Href], lq) {
				r.Pages.Hits = append(r.Pages.Hits, views.SearchHit{Label: item.Label, Detail: g.Heading, Href: item.Href})
			}
		}
	}
	return r, nil
}

// searchRefused shows a search the store refuses as input (too long) as a
// message in the results; anything else is the error page's.
func searchRefused(r views.SearchResults, err error) (views.SearchResults, error) {
	if ve := (*core.ValidationError)(nil); errors.As(err, &ve) {
		r.Error = searchTooLong
		r.Flags, r.Segments = views.SearchGroup{}, views.SearchGroup{}
		return r, nil
	}
	return r, err
}

// searchTooLong is what a search longer than the store takes is told.
var searchTooLong = fmt.Sprintf("Search for at most %d characters.", core.MaxNameLen)

// searchFlags finds the environment's flags whose name or key holds q; a
// flag whose key is q comes first, found even when many others match.
func (p *pages) searchFlags(c echo.Context, w workEnv, q string) (views.SearchGroup, error) {
	ctx, a := c.Request().Context(), actor(c)
	return searchKind(q, "flags",
		func() (core.Paged[flagstore.FlagListItem], error) {
			return p.store.Flags().ListFlags(ctx, a, w.id, flagstore.FlagFilter{Name: q, Page: core.Page{Size: searchHits}})
		},
		func() (flagstore.Flag, error) { return p.store.Flags().GetFlag(ctx, a, w.id, q) },
		func(f flagstore.FlagListItem) views.SearchHit {
			return views.SearchHit{Label: f.Name, Detail: f.Key, Href: flagHref(f.Key)}
		},
		func(f flagstore.Flag) (views.SearchHit, bool) {
			return views.SearchHit{Label: f.Name, Detail: f.Key, Href: flagHref(f.Key)}, !f.IsArchived
		})
}

// searchSegments finds the segments visible in the environment whose name
// holds q, and the one whose key is q, first.
func (p *pages) searchSegments(c echo.Context, w workEnv, q string) (views.SearchGroup, error) {
	ctx, a := c.Request().Context(), actor(c)
	hit := func(sg flagstore.Segment) views.SearchHit {
		return views.SearchHit{Label: sg.Name, Detail: sg.Key, Href: segmentHref(sg.ID.String())}
	}
	return searchKind(q, "segments",
		func() (core.Paged[flagstore.Segment], error) {
			return p.store.Segments().ListSegments(ctx, a, w.id, segments.SegmentFilter{Name: q, Page: core.Page{Size: searchHits}})
		},
		func() (flagstore.Segment, error) { return p.store.Segments().SegmentByKey(ctx, a, w.id, q) },
		hit,
		func(sg flagstore.Segment) (views.SearchHit, bool) { return hit(sg), !sg.IsArchived })
}

// searchKind is one group of search results: the items listed by name, led
// by the one whose key is q (when q can be a key and that item is not
// archived). A kind the person may not read is an empty group, not an error.
func searchKind[L, E any](q, what string, list func() (core.Paged[L], error), byKey func() (E, error),
	listHit func(L) views.SearchHit, keyHit func(E) (views.SearchHit, bool)) (views.SearchGroup, error) {
	found, err := list()
	if errors.Is(err, core.ErrForbidden) {
		return views.SearchGroup{}, nil
	}
	if err != nil {
		return views.SearchGroup{}, err
	}
	var hits []views.SearchHit
	if core.KeyPattern.MatchString(q) {
		item, err := byKey()
		if ok, err := exactHit(err); err != nil {
			return views.SearchGroup{}, err
		} else if h, shown := keyHit(item); ok && shown {
			hits = append(hits, h)
		}
	}
	for _, item := range found.Items {
		hits = append(hits, listHit(item))
	}
	return searchGroup(hits, found.TotalCount, what, q), nil
}

// exactHit reads a lookup by the exact key searched for: found, or not a
// hit (no such key, or one the person may not read), or an error.
func exactHit(err error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, core.ErrNotFound), errors.Is(err, core.ErrForbidden):
		return false, nil
	}
	return false, err
}

// searchGroup is one kind's hits, the exact key's first: each key once, at
// most searchHits, and a link to the whole list (/flags or /segments) when
// the list matched more.
func searchGroup(hits []views.SearchHit, total int64, kind, q string) views.SearchGroup {
	var g views.SearchGroup
	for _, h := range hits {
		if len(g.Hits) < searchHits && !slices.ContainsFunc(g.Hits, func(k views.SearchHit) bool { return k.Detail == h.Detail }) {
			g.Hits = append(g.Hits, h)
		}
	}
	if total > int64(len(g.Hits)) {
		g.More = "/" + kind + "?" + url.Values{"q": {q}}.Encode()
		g.MoreLabel = fmt.Sprintf("All %s matching “%s”", kind, q)
	}
	return g
}
