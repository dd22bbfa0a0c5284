package web

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/views"
)

// loginPage shows the sign-in form; a signed-in person goes straight on.
func (p *pages) loginPage(c echo.Context) error {
	next := localPath(c.QueryParam("next"))
	// Asking the server, not only the cookie, whether the session is live:
	// an ended session's cookie would otherwise bounce between here and next.
	if _, err := p.store.IAM().SessionActor(c.Request().Context(), cookieToken(p.session(c)), "", ""); err == nil {
		return c.Redirect(http.StatusSeeOther, next)
	} else if !errors.Is(err, core.ErrUnauthenticated) {
		return err
	}
	return p.renderLogin(c, http.StatusOK, p.form(c, "login", "/login", map[string]string{"next": next}), nil)
}

// renderLogin shows the sign-in page; sso is the single sign-on form just
// posted, nil for a fresh one.
func (p *pages) renderLogin(c echo.Context, status int, f views.Form, sso *views.Form) error {
	offer, err := p.ssoOffer(c, f.Values["next"], sso)
	if err != nil {
		return err
	}
	return render(c, status, views.LoginPage(views.Login{
		Doc:  views.Doc{Title: "Sign in", Assets: p.assets.views(), CSRF: f.CSRF},
		Form: f,
		SSO:  offer,
	}))
}

// login checks the email and password with the same store call, throttling
// and answers as the API's sign-in, and starts a browser session.
func (p *pages) login(c echo.Context) error {
	var posted loginForm
	if err := bind(c, &posted); err != nil {
		return err
	}
	in := iam.LoginInput(posted)
	next := localPath(c.FormValue("next"))
	session, err := p.store.IAM().Login(c.Request().Context(), in, c.RealIP())
	if err == nil {
		if err := p.startSession(c, session); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, next)
	}
	f := p.form(c, "login", "/login", map[string]string{"next": next, "email": in.Email})
	status, err := formProblems(err, &f, "email", "password")
	switch {
	case errors.Is(err, core.ErrBadCredentials):
		status, f.Error = http.StatusUnauthorized, "The email or password is not correct."
	case errors.Is(err, core.ErrTooManyRequests):
		status, f.Error = http.StatusTooManyRequests, "Too many failed attempts. Wait a few minutes and try again."
	case err != nil:
		return err
	}
	return p.renderLogin(c, status, f, nil)
}

// logout ends the browser session, on the server too: a copy of the cookie
// no longer signs anyone in.
func (p *pages) logout(c echo.Context) error {
	if err := p.endSession(c); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/login")
}

// profile shows the signed-in person, their name form and the password form.
func (p *pages) profile(c echo.Context) error {
	return p.profilePage(c, http.StatusOK, nil, p.form(c, "password", "/profile/password", nil))
}

// profilePage renders the profile; account is the name form just posted,
// nil for a fresh one.
func (p *pages) profilePage(c echo.Context, status int, account *views.Form, password views.Form) error {
	if isHTMX(c) && account == nil {
		return render(c, status, views.PasswordForm(password), views.Flashes(p.flashes(c)))
	}
	me, err := p.store.IAM().GetProfile(c.Request().Context(), actor(c))
	if err != nil {
		return err
	}
	if account == nil {
		f := p.form(c, "profile", "/profile", map[string]string{"name": me.Name})
		account = &f
	}
	shell, err := p.shell(c, "Profile", navProfile)
	if err != nil {
		return err
	}
	return render(c, status, views.ProfilePage(views.Profile{Shell: shell, Name: me.Name, Email: me.Email,
		Account: *account, Password: password}))
}

// updateProfile changes the signed-in person's name; their email stays.
func (p *pages) updateProfile(c echo.Context) error {
	ctx := c.Request().Context()
	me, err := p.store.IAM().GetProfile(ctx, actor(c))
	if err != nil {
		return err
	}
	name := c.FormValue("name")
	var updated iam.Profile
	if _, named := c.Request().PostForm["name"]; named {
		updated, err = p.store.IAM().UpdateProfile(ctx, actor(c), iam.ProfileInput{Name: name, Email: me.Email})
	} else {
		// An empty name asks for the email's; a form without the field asks
		// for nothing, and changing the name anyway would be a silent success.
		err = core.Invalid("name_is_required")
	}
	if err == nil {
		p.keepFlash(c, fmt.Sprintf("Your name is “%s” now.", updated.Name))
		return c.Redirect(http.StatusSeeOther, "/profile")
	}
	f := p.form(c, "profile", "/profile", map[string]string{"name": name})
	status, err := formProblems(err, &f, "name")
	if err != nil {
		return err
	}
	return p.profilePage(c, status, &f, p.form(c, "password", "/profile/password", nil))
}

// changePassword changes the password, which ends every session of the
// user, and keeps this browser signed in with a new one.
func (p *pages) changePassword(c echo.Context) error {
	var posted passwordForm
	if err := bind(c, &posted); err != nil {
		return err
	}
	in := iam.ResetPasswordInput(posted)
	// Typing the new password twice is the form's own check: a typo would
	// lock the person out. The store never sees the second copy.
	if confirm := c.FormValue("confirmPassword"); confirm != in.NewPassword {
		f := p.form(c, "password", "/profile/password", nil)
		f.Errors = map[string]string{"confirmPassword": "The two new passwords differ; type the same one twice."}
		return p.profilePage(c, http.StatusBadRequest, nil, f)
	}
	session, err := p.store.IAM().ResetPassword(c.Request().Context(), actor(c), in)
	if err == nil {
		if err := p.startSession(c, session); err != nil {
			return err
		}
		return p.changed(c, "/profile", "Password changed. Other sessions are signed out.", func() error {
			return p.profilePage(c, http.StatusOK, nil, p.form(c, "password", "/profile/password", nil))
		})
	}
	f := p.form(c, "password", "/profile/password", nil)
	status, err := formProblems(err, &f, "currentPassword", "newPassword")
	if err != nil {
		return err
	}
	return p.profilePage(c, status, nil, f)
}
