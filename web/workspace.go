package web

import (
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/views"
)

// workspace shows the workspace settings.
func (p *pages) workspace(c echo.Context) error {
	return p.workspacePage(c, http.StatusOK, nil, nil)
}

// workspacePage renders the workspace page; general and sso carry the state
// of a form just posted, nil for forms filled from the stored settings.
func (p *pages) workspacePage(c echo.Context, status int, general, sso *views.Form) error {
	a := actor(c)
	ws, err := p.store.IAM().GetWorkspace(c.Request().Context(), a)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	g := views.WorkspaceGeneral{Editable: p.store.IAM().CanChangeWorkspace(ctx, a, access.UpdateWorkspaceGeneralSettings)}
	if general != nil {
		g.Form = *general
	} else {
		g.Form = p.form(c, "workspace", "/workspace", map[string]string{"name": ws.Name, "key": ws.Key})
	}
	var ssoView *views.WorkspaceSSO
	if p.store.IAM().CanChangeWorkspace(ctx, a, access.UpdateWorkspaceSSOSettings) {
		v := views.WorkspaceSSO{SecretStored: ws.SSO != nil && ws.SSO.OIDC.ClientSecret != "", RedirectURI: p.sso.redirectURI}
		v.Test, _ = c.Get(ssoTestKey).(*views.SSOTest)
		if sso != nil {
			v.Form = *sso
		} else {
			var o iam.OIDCSettings
			if ws.SSO != nil {
				o = ws.SSO.OIDC
			}
			v.Form = p.form(c, "sso", "/workspace/sso", oidcValues(o))
		}
		v.Methods = options(v.Form.Values["clientAuthenticationMethod"], iam.ClientSecretBasic, iam.ClientSecretPost)
		ssoView = &v
	}
	regions := []templ.Component{views.WorkspaceGeneralView(g)}
	if ssoView != nil {
		regions = append(regions, views.WorkspaceSSOView(*ssoView))
	}
	return p.respond(c, status, "Workspace", navWorkspace, func(shell views.Shell) templ.Component {
		return views.WorkspacePage(views.Workspace{Shell: shell, General: g, SSO: ssoView})
	}, regions...)
}

// oidcValues fills the single sign-on form; the client secret never goes back to the browser.
func oidcValues(o iam.OIDCSettings) map[string]string {
	return map[string]string{
		"clientId": o.ClientID, "authorizationEndpoint": o.AuthorizationEndpoint, "tokenEndpoint": o.TokenEndpoint,
		"clientAuthenticationMethod": o.ClientAuthenticationMethod, "scope": o.Scope,
		"userEmailClaim": o.UserEmailClaim, "issuer": o.Issuer,
	}
}

// typedOIDCValues are the SSO form's values as just typed, the client secret
// too: a refused save or a test shows the form again with the secret still
// in its field (sent back only to whoever typed it; a stored secret is never
// shown).
func typedOIDCValues(o iam.OIDCSettings) map[string]string {
	v := oidcValues(o)
	v["clientSecret"] = o.ClientSecret
	return v
}

// updateWorkspace changes the workspace's name and key.
func (p *pages) updateWorkspace(c echo.Context) error {
	var posted nameKeyForm
	if err := bind(c, &posted); err != nil {
		return err
	}
	in := iam.WorkspaceInput(posted)
	_, err := p.store.IAM().UpdateWorkspace(c.Request().Context(), actor(c), in)
	if err == nil {
		return p.changed(c, "/workspace", "Workspace saved.", func() error {
			return p.workspacePage(c, http.StatusOK, nil, nil)
		})
	}
	f := p.form(c, "workspace", "/workspace", map[string]string{"name": in.Name, "key": in.Key})
	status, err := formProblems(err, &f, "name", "key")
	if err != nil {
		return err
	}
	return p.workspacePage(c, status, &f, nil)
}

// updateWorkspaceSSO stores the OIDC settings; an empty client secret keeps the stored one.
func (p *pages) updateWorkspaceSSO(c echo.Context) error {
	in, err := postedInput[oidcForm](c)
	if err != nil {
		return err
	}
	_, err = p.store.IAM().UpdateWorkspaceSSO(c.Request().Context(), actor(c), in)
	if err == nil {
		return p.changed(c, "/workspace", "Single sign-on saved.", func() error {
			return p.workspacePage(c, http.StatusOK, nil, nil)
		})
	}
	f := p.form(c, "sso", "/workspace/sso", typedOIDCValues(in))
	status, err := formProblems(err, &f, "clientId", "clientSecret", "authorizationEndpoint", "tokenEndpoint",
		"clientAuthenticationMethod", "scope", "userEmailClaim", "issuer")
	if err != nil {
		return err
	}
	return p.workspacePage(c, status, nil, &f)
}
