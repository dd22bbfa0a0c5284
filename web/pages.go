package web

import (
	"log/slog"
	"net/http"

	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store"
	"github.com/bunting-flags/bunting/static"
)

// pages serves the admin application: server-rendered pages that decode forms
// into the store's input types, call the same store methods as the API, and
// render views.
type pages struct {
	store    *store.Store
	log      *slog.Logger
	sessions *sessions.CookieStore
	assets   *assets
	csrf     *csrfGuard
	sso      *ssoClient
}

func newPages(cfg Config, s *store.Store, log *slog.Logger) (*pages, error) {
	as, err := newAssets(static.FS)
	if err != nil {
		return nil, err
	}
	secure := cfg.BaseURL.Scheme == "https"
	return &pages{store: s, log: log, assets: as,
		sessions: newSessionStore(s.Keys(), secure),
		csrf:     newCSRFGuard(s.Keys().CSRF, secure),
		sso:      newSSOClient(cfg.BaseURL)}, nil
}

// register adds every page route to e. Every page but sign-in needs a
// session; every page checks the CSRF token of state-changing requests.
// Forms post to POST routes (HTML forms know no other methods), so each
// action works with and without script.
func (p *pages) register(e *echo.Echo) {
	page := []echo.MiddlewareFunc{p.csrf.protect, p.signedIn}
	public := []echo.MiddlewareFunc{p.csrf.protect}

	e.GET("/static/:name", p.assets.serve)
	e.GET("/docs", p.apiReference) // the API reference; public, like the document

	e.GET("/login", p.loginPage, public...)
	e.POST("/login", p.login, public...)
	e.POST("/logout", p.logout, public...)
	e.POST("/sso/start", p.startSSO, public...)
	e.GET("/sso/callback", p.ssoCallback)

	e.GET("/", p.home, page...)
	e.POST("/context", p.switchContext, page...)
	e.GET("/profile", p.profile, page...)
	e.POST("/profile/password", p.changePassword, page...)

	e.GET("/projects", p.projects, page...)
	e.POST("/projects", p.createProject, page...)
	e.GET("/projects/:id", p.project, page...)
	e.POST("/projects/:id", p.renameProject, page...)
	e.GET("/projects/:id/delete", p.confirmDeleteProject, page...)
	e.POST("/projects/:id/delete", p.deleteProject, page...)

	e.POST("/projects/:id/envs", p.createEnvironment, page...)
	e.GET("/projects/:id/envs/:envId", p.environment, page...)
	e.POST("/projects/:id/envs/:envId", p.updateEnvironment, page...)
	e.GET("/projects/:id/envs/:envId/delete", p.confirmDeleteEnvironment, page...)
	e.POST("/projects/:id/envs/:envId/delete", p.deleteEnvironment, page...)

	e.POST("/projects/:id/envs/:envId/secrets", p.createSecret, page...)
	e.POST("/projects/:id/envs/:envId/secrets/:secretId", p.renameSecret, page...)
	e.POST("/projects/:id/envs/:envId/secrets/:secretId/delete", p.deleteSecret, page...)

	e.GET("/access-tokens", p.accessTokens, page...)
	e.POST("/access-tokens", p.createAccessToken, page...)
	e.POST("/access-tokens/:id/toggle", p.toggleAccessToken, page...)
	e.POST("/access-tokens/:id/delete", p.deleteAccessToken, page...)

	e.GET("/workspace", p.workspace, page...)
	e.POST("/workspace", p.updateWorkspace, page...)
	e.POST("/workspace/sso", p.updateWorkspaceSSO, page...)
	e.POST("/workspace/sso/test", p.testWorkspaceSSO, page...)
}

// home is the landing page; until the flags pages exist it is the projects list.
func (p *pages) home(c echo.Context) error {
	return c.Redirect(http.StatusSeeOther, "/projects")
}
