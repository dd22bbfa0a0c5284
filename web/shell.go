package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/workplace"
	"github.com/bunting-flags/bunting/views"
)

// Main navigation entries, by the key pages pass as active.
const (
	navProjects     = "projects"
	navAccessTokens = "access-tokens"
	navWorkspace    = "workspace"
	navProfile      = "profile"
)

// shell builds the frame of a signed-in page: navigation limited to what the
// person may use, the context switcher, and the messages to show.
func (p *pages) shell(c echo.Context, title, active string) (views.Shell, error) {
	w, err := p.workplace(c)
	if err != nil {
		return views.Shell{}, err
	}
	nav, err := p.navGroups(c, active)
	if err != nil {
		return views.Shell{}, err
	}
	reviews, err := p.reviewsWaiting(c)
	if err != nil {
		return views.Shell{}, err
	}
	token := csrfToken(c)
	return views.Shell{
		Doc:       views.Doc{Title: title, Assets: p.assets.views(), CSRF: token},
		Nav:       nav,
		Reviews:   reviews,
		UserEmail: w.Profile.Email,
		Switcher:  p.switcher(c, w),
		Flashes:   p.flashes(c),
	}, nil
}

// navGroups is the main navigation, limited to what the person may use: the
// daily work on flags and segments apart from the administration of the
// organization, and the person's own pages. The search finds pages among
// these, so it offers no page the navigation hides.
func (p *pages) navGroups(c echo.Context, active string) ([]views.NavGroup, error) {
	may := place(c).Org
	reviews, err := p.reviewsNav(c, active)
	if err != nil {
		return nil, err
	}
	work := []views.NavItem{{Label: "Feature flags", Href: "/flags", TestID: "nav-flags", Active: active == navFlags}}
	work = append(work, reviews...)
	work = append(work,
		views.NavItem{Label: "Segments", Href: "/segments", TestID: "nav-segments", Active: active == navSegments},
		views.NavItem{Label: "End users", Href: "/end-users", TestID: "nav-end-users", Active: active == navEndUsers},
		views.NavItem{Label: "Experiments", Href: "/experiments", TestID: "nav-experiments", Active: active == navExperiments || active == navMetrics},
		views.NavItem{Label: "Audit log", Href: "/audit-log", TestID: "nav-audit-log", Active: active == navAuditLog})

	admin := []views.NavItem{{Label: "Projects", Href: "/projects", TestID: "nav-projects", Active: active == navProjects}}
	if may.ListAccessTokens {
		admin = append(admin, views.NavItem{Label: "Access tokens", Href: "/access-tokens", TestID: "nav-access-tokens", Active: active == navAccessTokens})
	}
	admin = append(admin, iamNav(may, active)...)
	admin = append(admin, views.NavItem{Label: "Workspace", Href: "/workspace", TestID: "nav-workspace", Active: active == navWorkspace})

	you := []views.NavItem{
		{Label: "Profile", Href: "/profile", TestID: "nav-profile", Active: active == navProfile},
		{Label: "API reference", Href: "/docs", TestID: "nav-api-reference"},
	}
	return []views.NavGroup{
		{ID: "nav-work", Heading: "Daily work", Items: work},
		{ID: "nav-admin", Heading: "Administration", Items: admin},
		{ID: "nav-you", Heading: "Account and help", Items: you},
	}, nil
}

// switcher is the top bar's choice of organization and environment. After
// a change made with htmx it is sent again out of band (switcherAgain), so
// the bar follows renamed and new projects and environments at once.
func (p *pages) switcher(c echo.Context, w workplace.Frame) views.Switcher {
	a, orgs := actor(c), w.Organizations
	next := c.Request().URL.RequestURI()
	if u, err := url.Parse(c.Request().Header.Get("HX-Current-URL")); err == nil && u.Path != "" {
		next = u.RequestURI() // the page the change was made on, not the form's address
	}
	sw := views.Switcher{CSRF: csrfToken(c), Next: next}
	if place(c).Org.CreateOrganization {
		sw.NewOrgHref = "/organizations/new"
	}
	if len(orgs) > 1 {
		for _, o := range orgs {
			sw.Orgs = append(sw.Orgs, views.Option{Value: o.ID.String(), Label: o.Name, Selected: o.ID == a.OrgID})
		}
	} else if len(orgs) == 1 {
		sw.OrgName = orgs[0].Name
	}
	for _, pr := range w.Projects {
		if len(pr.Environments) == 0 {
			continue
		}
		g := views.OptionGroup{Label: pr.Name}
		for _, e := range pr.Environments {
			// The closed select shows only the option: name the project too.
			g.Options = append(g.Options, views.Option{Value: e.ID.String(), Label: pr.Name + " / " + e.Name, Selected: w.Env != nil && e.ID == w.Env.ID})
		}
		sw.Envs = append(sw.Envs, g)
	}
	return sw
}

// switcherAgain is the top bar's switcher for an htmx answer to a change,
// swapped in out of band. It loads what it shows when rendered, after the
// change, and only when an htmx answer renders it.
func (p *pages) switcherAgain(c echo.Context) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, out io.Writer) error {
		w, err := p.workplace(c)
		if err != nil {
			return err
		}
		return views.SwitcherOOB(p.switcher(c, w)).Render(ctx, out)
	})
}

// switchContext remembers the organization or environment chosen in the
// switcher and goes back to the page it was chosen on.
func (p *pages) switchContext(c echo.Context) error {
	in, err := postedInput[contextForm](c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	was, _ := workEnvOf(c) // where the page was, before the switch
	now, err := p.store.IAM().SetUserContext(ctx, actor(c), in)
	if err != nil {
		return err
	}
	next, err := p.samePlace(c, was.id, now, localPath(c.FormValue("next")))
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, next)
}

// flagPlace and segmentPlace are the pages of one flag or segment, any tab.
var (
	flagPlace    = regexp.MustCompile(`^/flags/([^/?#]+)(/[a-z-]+)?$`)
	segmentPlace = regexp.MustCompile(`^/segments/([^/?#]+)(/[a-z-]+)?$`)
)

// samePlace is where the environment switch leads from a page: a flag's or
// a segment's page opens the same key in the new environment when it is
// there, else that environment's list with a notice; other pages stay.
func (p *pages) samePlace(c echo.Context, was uuid.UUID, now core.UserContext, next string) (string, error) {
	path, _, _ := strings.Cut(next, "?")
	ctx, a := c.Request().Context(), actor(c)
	w, err := p.store.Workplace().Place(ctx, a, now)
	if err != nil || w.Env == nil {
		return next, err
	}
	envName := w.Project.Name + " / " + w.Env.Name
	if m := flagPlace.FindStringSubmatch(path); m != nil {
		key, _ := url.PathUnescape(m[1])
		_, err := p.store.Flags().GetFlag(ctx, a, w.Env.ID, key)
		switch {
		case err == nil:
			return path, nil
		case errors.Is(err, core.ErrNotFound):
			p.keepFlash(c, fmt.Sprintf("There is no flag “%s” in %s; here are its flags.", key, envName))
			return "/flags", nil
		}
		return "", err
	}
	if m := segmentPlace.FindStringSubmatch(path); m != nil {
		// The segment's key, read where it was; then the segment with that
		// key where the person now works (a shared one keeps its id).
		id, perr := uuid.Parse(m[1])
		var key string
		if perr == nil && was != uuid.Nil {
			if sg, err := p.store.Segments().GetSegment(ctx, a, was, id); err == nil {
				key = sg.Key
			}
		}
		if key != "" {
			sg, err := p.store.Segments().SegmentByKey(ctx, a, w.Env.ID, key)
			switch {
			case err == nil:
				return segmentHref(sg.ID.String()) + m[2], nil
			case !errors.Is(err, core.ErrNotFound):
				return "", err
			}
			p.keepFlash(c, fmt.Sprintf("There is no segment “%s” in %s; here are its segments.", key, envName))
		}
		return "/segments", nil
	}
	return next, nil
}

// reviewsNav is the entry "Reviews" with how many change requests wait for
// the person's review in every environment of the organization: shown when
// some do, or where the working environment's changes need approval.
func (p *pages) reviewsNav(c echo.Context, active string) ([]views.NavItem, error) {
	n, err := p.reviewsWaiting(c)
	if err != nil {
		return nil, err
	}
	if w, ok := workEnvOf(c); n == 0 && (!ok || w.approvals == 0) {
		return nil, nil
	}
	return []views.NavItem{{Label: fmt.Sprintf("Reviews (%d)", n), Href: "/reviews", TestID: "nav-reviews", Active: active == navReviews}}, nil
}

// reviewsWaiting counts the change requests waiting for the person's
// review across the organization, as the place loaded them.
func (p *pages) reviewsWaiting(c echo.Context) (int, error) {
	if err := c.Get(placeKey).(*requestPlace).loaded(); err != nil {
		return 0, err
	}
	return place(c).ReviewsWaiting, nil
}
