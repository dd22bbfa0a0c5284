package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"
	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/workplace"
	"github.com/bunting-flags/bunting/views"
	"github.com/bunting-flags/bunting/web/httpx"
)

// The browser session is an encrypted, authenticated cookie holding the
// store's session token, as the API's sign-in answers it: it names a session
// the server keeps, so signing out or changing the password ends it for good,
// even for a copy of the cookie.
const (
	sessionCookie = "bunting_session"

	sessionToken = "token"
	// sessionGuideSkipped lists, comma-separated, the organizations whose
	// first-run guide this session skipped (the latest few).
	sessionGuideSkipped = "guideSkipped"
)

// Request-scoped values set by signedIn.
const (
	actorKey = "actor"
	placeKey = "place"
	// pageSessionKey holds the iam.PageSession signedIn resolved.
	pageSessionKey = "pageSession"
	workplaceKey   = "workplace"
	flashKey       = "flashes"
)

// errNoOrganization: the signed-in user belongs to no organization.
var errNoOrganization = errors.New("user belongs to no organization")

func newSessionStore(keys core.Keys, secure bool) *sessions.CookieStore {
	cs := sessions.NewCookieStore(keys.CookieHash, keys.CookieBlock)
	cs.Options = &sessions.Options{Path: "/", HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode}
	cs.MaxAge(int(core.SessionLifetime.Seconds())) // the cookie's Max-Age and the codec's timestamp check
	return cs
}

// session returns the request's session; a missing or forged cookie gives an empty one.
func (p *pages) session(c echo.Context) *sessions.Session {
	s, err := p.sessions.Get(c.Request(), sessionCookie)
	if err != nil { // undecodable: Get still returns a fresh session
		p.log.DebugContext(c.Request().Context(), "session cookie rejected", "err", err)
	}
	return s
}

// startSession signs the user in, dropping whatever the session held before.
func (p *pages) startSession(c echo.Context, s iam.Session) error {
	sess := p.session(c)
	sess.Values = map[any]any{sessionToken: s.Token}
	return sess.Save(c.Request(), c.Response())
}

// endSession ends the cookie's session on the server and deletes the cookie.
func (p *pages) endSession(c echo.Context) error {
	sess := p.session(c)
	if token := cookieToken(sess); token != "" {
		if err := p.store.IAM().EndSession(c.Request().Context(), token); err != nil {
			return err
		}
	}
	sess.Values = map[any]any{}
	sess.Options.MaxAge = -1
	return sess.Save(c.Request(), c.Response())
}

// cookieToken is the session token the cookie holds, or "".
func cookieToken(sess *sessions.Session) string {
	token, _ := sess.Values[sessionToken].(string)
	return token
}

// signedIn resolves the session to the store's Actor, in the organization the
// user last chose, and where they work there (place), or sends the browser to
// sign in. Each is loaded once for the request; the session comes from the
// actor cache the API shares.
func (p *pages) signedIn(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		token := cookieToken(p.session(c))
		if token == "" {
			return p.toLogin(c)
		}
		ps, err := p.actors.SignedIn(ctx, token)
		if errors.Is(err, core.ErrUnauthenticated) { // signed out, password changed, or user gone
			if err := p.endSession(c); err != nil {
				return err
			}
			return p.toLogin(c)
		}
		if err != nil {
			return err
		}
		a := ps.Actor
		if a.OrgID == uuid.Nil {
			return errNoOrganization
		}
		c.Set(actorKey, a)
		c.Set(pageSessionKey, ps)
		rp := &requestPlace{load: func() (workplace.Place, error) { return p.store.Workplace().Place(ctx, a, ps.Context) },
			pl: workplace.Place{Context: ps.Context, Org: core.OrganizationRights(a, a.OrgKey)}}
		c.Set(placeKey, rp)
		if r := c.Request(); r.Method == http.MethodGet || r.Method == http.MethodHead {
			// A page read changes no environment, so the working one, loaded
			// with the place, is what every check and read of it finds.
			if err := rp.loaded(); err != nil {
				return err
			}
			c.SetRequest(r.WithContext(rp.pl.InWorkingEnv(ctx)))
		}
		httpx.SetPrincipal(c, httpx.Member, "user:"+a.UserID.String(), a.OrgID)
		return next(c)
	}
}

func idString(id uuid.UUID) string {
	if id == uuid.Nil {
		return ""
	}
	return id.String()
}

// toLogin sends the browser to the sign-in page, to come back to this page
// afterwards (only pages can be come back to; actions return to the start).
func (p *pages) toLogin(c echo.Context) error {
	to := "/login"
	if r := c.Request(); r.Method == http.MethodGet && !isHTMX(c) && r.URL.Path != "/" {
		to += "?next=" + url.QueryEscape(r.URL.RequestURI())
	}
	return redirect(c, to)
}

// localPath returns next when it is a path on this site, else "/": the sign-in
// page must never send anyone elsewhere.
func localPath(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n\t") {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return "/"
	}
	return u.RequestURI()
}

// actor is the signed-in user acting in their current organization.
func actor(c echo.Context) *core.Actor { return c.Get(actorKey).(*core.Actor) }

// workplace is the frame of a signed-in page (profile, organizations,
// projects, the working environment with its secrets). A GET changes
// nothing, so its frame is drawn from the place loaded with the session and
// shared by the shell and the page; after a change the place is loaded
// again, so the frame shows what the change made.
func (p *pages) workplace(c echo.Context) (workplace.Frame, error) {
	if w, ok := c.Get(workplaceKey).(workplace.Frame); ok {
		return w, nil
	}
	ctx, pl, ps := c.Request().Context(), place(c), c.Get(pageSessionKey).(iam.PageSession)
	if c.Request().Method != http.MethodGet {
		// A post may have changed projects, environments, its organization's
		// name or the person's own after its session and place were loaded:
		// its frame reads them again (the change emptied the cache of them).
		again, err := p.actors.SignedIn(ctx, cookieToken(p.session(c)))
		if err != nil {
			return workplace.Frame{}, err
		}
		return p.store.Workplace().FrameAt(ctx, again)
	}
	w, err := p.store.Workplace().Frame(ctx, ps, pl)
	if err == nil {
		c.Set(workplaceKey, w)
	}
	return w, err
}

// keepFlash keeps a message in the session for the next page.
func (p *pages) keepFlash(c echo.Context, text string) {
	sess := p.session(c)
	sess.AddFlash(text)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		p.log.WarnContext(c.Request().Context(), "keep flash message", "err", err)
	}
}

// problemFlashes is the session's key for messages kept to be shown as
// problems (a test that failed), not as successes.
const problemFlashes = "problem"

// keepProblem keeps a message in the session for the next page, shown as
// something that went wrong.
func (p *pages) keepProblem(c echo.Context, text string) {
	sess := p.session(c)
	sess.AddFlash(text, problemFlashes)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		p.log.WarnContext(c.Request().Context(), "keep flash message", "err", err)
	}
}

// flashes returns the messages to show: those kept for this page by the
// previous request, and those this request produced.
func (p *pages) flashes(c echo.Context) []views.Flash {
	out, _ := c.Get(flashKey).([]views.Flash)
	sess := p.session(c)
	problems, kept := sess.Flashes(problemFlashes), sess.Flashes()
	if len(kept)+len(problems) > 0 {
		for _, f := range problems {
			if text, ok := f.(string); ok {
				out = append(out, views.Flash{Kind: "error", Text: text})
			}
		}
		for _, f := range kept {
			if text, ok := f.(string); ok {
				out = append(out, views.Flash{Kind: "success", Text: text})
			}
		}
		if err := sess.Save(c.Request(), c.Response()); err != nil {
			p.log.WarnContext(c.Request().Context(), "clear flash messages", "err", err)
		}
	}
	return out
}
