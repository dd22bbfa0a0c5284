package web

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store"
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
	ctx := c.Request().Context()
	a := actor(c)
	profile, err := p.store.GetProfile(ctx, a)
	if err != nil {
		return views.Shell{}, err
	}
	orgs, err := p.store.ListOrganizations(ctx, a)
	if err != nil {
		return views.Shell{}, err
	}
	projects, err := p.store.ListProjects(ctx, a)
	if err != nil {
		return views.Shell{}, err
	}

	nav := []views.NavItem{{Label: "Projects", Href: "/projects", TestID: "nav-projects", Active: active == navProjects}}
	nav = append([]views.NavItem{
		{Label: "Feature flags", Href: "/flags", TestID: "nav-flags", Active: active == navFlags},
		{Label: "Segments", Href: "/segments", TestID: "nav-segments", Active: active == navSegments},
		{Label: "Audit log", Href: "/audit-log", TestID: "nav-audit-log", Active: active == navAuditLog},
	}, nav...)
	if a.Can(access.ListAccessTokens, store.AccessTokenRN) {
		nav = append(nav, views.NavItem{Label: "Access tokens", Href: "/access-tokens", TestID: "nav-access-tokens", Active: active == navAccessTokens})
	}
	nav = append(nav, iamNav(a, orgs, active)...)
	nav = append(nav,
		views.NavItem{Label: "Workspace", Href: "/workspace", TestID: "nav-workspace", Active: active == navWorkspace},
		views.NavItem{Label: "Profile", Href: "/profile", TestID: "nav-profile", Active: active == navProfile})

	token := csrfToken(c)
	sw := views.Switcher{CSRF: token, Next: c.Request().URL.RequestURI()}
	if len(orgs) > 1 {
		for _, o := range orgs {
			sw.Orgs = append(sw.Orgs, views.Option{Value: o.ID.String(), Label: o.Name, Selected: o.ID == a.OrgID})
		}
	} else if len(orgs) == 1 {
		sw.OrgName = orgs[0].Name
	}
	_, envID := current(userContext(c), projects)
	for _, pr := range projects {
		if len(pr.Environments) == 0 {
			continue
		}
		g := views.OptionGroup{Label: pr.Name}
		for _, e := range pr.Environments {
			// The closed select shows only the option: name the project too.
			g.Options = append(g.Options, views.Option{Value: e.ID.String(), Label: pr.Name + " / " + e.Name, Selected: e.ID == envID})
		}
		sw.Envs = append(sw.Envs, g)
	}

	return views.Shell{
		Doc:       views.Doc{Title: title, Assets: p.assets.views(), CSRF: token},
		Nav:       nav,
		UserEmail: profile.Email,
		Switcher:  sw,
		Flashes:   p.flashes(c),
	}, nil
}

// current picks the project and environment the pages work in: the
// remembered environment while the person can still see it, else the first
// environment of the remembered project, else the very first one.
func current(uc store.UserContext, projects []store.Project) (projectID, envID uuid.UUID) {
	var firstProject, firstEnv uuid.UUID
	for _, pr := range projects {
		for i, e := range pr.Environments {
			if e.ID == uc.EnvID {
				return pr.ID, e.ID
			}
			if i == 0 && pr.ID == uc.ProjectID {
				projectID, envID = pr.ID, e.ID
			}
			if firstEnv == uuid.Nil {
				firstProject, firstEnv = pr.ID, e.ID
			}
		}
	}
	if envID != uuid.Nil {
		return projectID, envID
	}
	return firstProject, firstEnv
}

// switchContext remembers the organization or environment chosen in the
// switcher and goes back to the page it was chosen on.
func (p *pages) switchContext(c echo.Context) error {
	var in store.UserContext
	if err := bind(c, &in); err != nil {
		return err
	}
	if _, err := p.store.SetUserContext(c.Request().Context(), actor(c), in); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, localPath(c.FormValue("next")))
}
