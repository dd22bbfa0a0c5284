package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/sso"
	"github.com/bunting-flags/bunting/web/oidcflow"
)

// The routes FeatBit's admin UI calls on its way in: its sign-in page (SSO
// pre-check, social providers, single sign-on), the refresh-token cookie,
// joining the organization picked, and the lists its pickers and usage tab
// read.

// FeatBit's refresh-token cookie (Api/ApiConstants.cs,
// HttpResponseExtensions.cs): HttpOnly, SameSite=Lax, sent only to the
// identity routes, for RefreshTokenTTL. FeatBit never marks it Secure;
// Bunting does whenever the request came over TLS.
const (
	refreshCookie     = "refresh-token"
	refreshCookiePath = "/api/v1/identity"
)

// A single sign-on attempt begun from FeatBit's UI is kept by the browser in
// a cookie of its own, named after the attempt's state, sent only to the
// API's /sso/ routes; it is deleted when the UI posts the code, whatever the
// outcome, so an attempt is tried once (web's sso_attempt.go does the same
// for the pages).
const (
	ssoAttemptPrefix = "bunting_api_sso_"
	ssoAttemptPath   = "/api/v1/sso/"
	maxSSOAttempts   = 5
)

func secureRequest(c echo.Context) bool { return c.Scheme() == "https" }

func setRefreshCookie(c echo.Context, token string) {
	c.SetCookie(&http.Cookie{Name: refreshCookie, Value: token, Path: refreshCookiePath,
		MaxAge: int(iam.RefreshTokenTTL.Seconds()), HttpOnly: true, Secure: secureRequest(c), SameSite: http.SameSiteLaxMode})
}

func deleteRefreshCookie(c echo.Context) {
	c.SetCookie(&http.Cookie{Name: refreshCookie, Path: refreshCookiePath, MaxAge: -1,
		HttpOnly: true, Secure: secureRequest(c), SameSite: http.SameSiteLaxMode})
}

// refreshCookieValue is the refresh token the browser sent, or "".
func refreshCookieValue(c echo.Context) string {
	if ck, err := c.Cookie(refreshCookie); err == nil {
		return ck.Value
	}
	return ""
}

// refreshToken answers a new session token: from the refresh-token cookie
// when the browser sends one (FeatBit's UI, whose session token may have
// expired), revoking it and setting its successor; otherwise in place of the
// bearer session token presented. A refused cookie is deleted.
func (h *Handler) refreshToken(c echo.Context) error {
	refresh := refreshCookieValue(c)
	if refresh == "" {
		return h.authenticate(h.refreshSession)(c)
	}
	if err := noBody(c); err != nil {
		return err
	}
	in, err := h.store.IAM().RefreshWithToken(c.Request().Context(), refresh, c.RealIP())
	if errors.Is(err, core.ErrUnauthenticated) {
		deleteRefreshCookie(c)
	}
	if err != nil {
		return err
	}
	setRefreshCookie(c, in.Refresh)
	return respond(c, in.Session, nil)
}

// refreshSession replaces the caller's bearer session, in FeatBit's
// LoginToken shape.
func (h *Handler) refreshSession(c echo.Context) error {
	if err := noBody(c); err != nil {
		return err
	}
	s, err := h.store.IAM().RefreshSession(c.Request().Context(), actor(c))
	return respond(c, s, err)
}

// ssoPreCheck answers FeatBit's SsoPreCheck.
func (h *Handler) ssoPreCheck(c echo.Context) error {
	p, err := h.store.SSO().SSOPreCheck(c.Request().Context())
	return respond(c, p, err)
}

// socialProviders answers FeatBit's OAuth provider list: Bunting signs in
// with no social provider (FeatBit's come from its server settings).
func (h *Handler) socialProviders(c echo.Context) error {
	return respond(c, []struct{}{}, nil)
}

// oidcAuthorizeURL begins a single sign-on for FeatBit's UI and sends the
// browser to the workspace's provider (FeatBit answers a redirect too),
// keeping the attempt in a cookie.
func (h *Handler) oidcAuthorizeURL(c echo.Context) error {
	if !h.limits.AllowSSOStart(c.RealIP()) {
		return core.ErrTooManyRequests
	}
	redirectURI := query(c, "redirect_uri")
	login, err := h.store.SSO().BeginAppSSO(c.Request().Context(), query(c, "workspace_key"), redirectURI)
	if err != nil {
		return err
	}
	var kept []string
	for _, ck := range c.Cookies() {
		if strings.HasPrefix(ck.Name, ssoAttemptPrefix) {
			kept = append(kept, ck.Name)
		}
	}
	if len(kept) >= maxSSOAttempts { // someone clicking again and again: keep the cookies few
		for _, name := range kept {
			setSSOCookie(c, name, "", -1)
		}
	}
	setSSOCookie(c, ssoAttemptCookie(login.State), login.Sealed, int(sso.SSOStateTTL.Seconds()))
	return c.Redirect(http.StatusFound, oidcflow.AuthCodeURL(login, redirectURI))
}

// oidcLogin completes a single sign-on begun by oidcAuthorizeURL: the UI
// posts the code and state the provider sent it; the answer is a session
// token, with the refresh-token cookie, as signing in by email.
func (h *Handler) oidcLogin(c echo.Context) error {
	var in sso.AppSSOInput
	if err := bindWithin(c, &in, signInBodyBytes); err != nil {
		return err
	}
	sealed := ""
	if in.WorkspaceKey != "" {
		name := ssoAttemptCookie(in.WorkspaceKey)
		if ck, err := c.Cookie(name); err == nil {
			sealed = ck.Value
			setSSOCookie(c, name, "", -1)
		}
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), oidcflow.FlowTimeout)
	defer cancel()
	login, err := h.store.SSO().FinishAppSSO(ctx, in, sealed)
	if err != nil {
		return err
	}
	claims, err := h.sso.Identity(ctx, login, login.Next, in.Code)
	if err != nil {
		return err
	}
	signIn, err := h.store.IAM().SignInWithSSOAndRefresh(ctx, login.Client.WorkspaceID, claims, c.RealIP())
	if err != nil {
		return err
	}
	h.log.InfoContext(ctx, "single sign-on", "surface", "api", "workspace", login.Client.WorkspaceID,
		"user", signIn.UserID, "first", signIn.IsSsoFirstLogin)
	setRefreshCookie(c, signIn.Refresh)
	return respond(c, signIn.Session, nil)
}

// ssoAttemptCookie names the cookie of the attempt with this state: a hash,
// so whatever a client sends as the state, the name is a valid one.
func ssoAttemptCookie(state string) string {
	sum := sha256.Sum256([]byte(state))
	return ssoAttemptPrefix + hex.EncodeToString(sum[:8])
}

func setSSOCookie(c echo.Context, name, value string, maxAge int) {
	c.SetCookie(&http.Cookie{Name: name, Value: value, Path: ssoAttemptPath, MaxAge: maxAge,
		HttpOnly: true, Secure: secureRequest(c), SameSite: http.SameSiteLaxMode})
}

// joinOrganization is what FeatBit's UI calls once the person picked an
// organization (the Organization header); it answers true.
func (h *Handler) joinOrganization(c echo.Context) error {
	return answerNoBody(c, func(ctx context.Context, a *core.Actor, ids routeIDs) error {
		return h.store.IAM().JoinOrganization(ctx, a)
	})
}

// listOrganizationMembers answers FeatBit's GET /organizations/members:
// the member list of /members, for the pickers of those who are not IAM managers.
func (h *Handler) listOrganizationMembers(c echo.Context) error {
	return answerIAMList(c, "searchText", "", func(ctx context.Context, a *core.Actor, ids routeIDs, f iam.IAMFilter) (any, error) {
		return h.store.IAM().ListOrganizationMembers(ctx, a, f)
	})
}

// workspaceUsages answers FeatBit's WorkspaceUsageVm for its filter.
func (h *Handler) workspaceUsages(c echo.Context) error {
	u, err := h.store.IAM().WorkspaceUsage(c.Request().Context(), actor(c), iam.UsageFilter{
		StartDate: query(c, "startDate"), EndDate: query(c, "endDate"),
		PrevStartDate: query(c, "prevStartDate"), PrevEndDate: query(c, "prevEndDate")})
	return respond(c, u, err)
}
