package sso

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/bunting-flags/bunting/sql/store/core"
)

// Single sign-on begun from FeatBit's admin UI (the API's /sso/ routes). It is
// the pages' single sign-on (BeginSSO, FinishSSO, SignInWithSSO): the same
// sealed attempt kept by the browser, state, nonce and PKCE, the same
// settings and the same sign-in rule. What differs is where the provider
// sends the browser back: the UI's own sign-in page, whose address the UI
// names (FeatBit's redirect_uri), instead of the pages' /sso/callback; the UI
// then posts the code and the state back (the state in FeatBit's
// workspaceKey field, which FeatBit's own state carries).

// maxRedirectURILen bounds the redirect URI an attempt keeps: with the rest
// of the attempt it stays within maxAttemptJSON, so it fits in a cookie whole.
const maxRedirectURILen = 2000

// BeginAppSSO starts a single sign-on attempt for FeatBit's UI in the
// workspace with this key (or the only one, when empty), coming back to
// redirectURI: an absolute http or https URL, without credentials or a
// fragment, which the provider must have registered for the client (it
// refuses any other). The attempt keeps it, so the code is exchanged for
// the same one.
func (s *SSO) BeginAppSSO(ctx context.Context, workspaceKey, redirectURI string) (SSOLogin, error) {
	var v core.Validator
	if redirectURI == "" {
		v.Add("redirect_uri", "required")
	} else if !appRedirectURI(redirectURI) {
		v.Add("redirect_uri", "invalid")
	}
	if err := v.Err(); err != nil {
		return SSOLogin{}, err
	}
	login, err := s.BeginSSO(ctx, SSOStartInput{Workspace: workspaceKey, Next: redirectURI})
	var verr *core.ValidationError
	if errors.As(err, &verr) {
		// BeginSSO names the pages' field; FeatBit's query names it workspace_key.
		codes := make([]string, len(verr.Codes))
		for i, c := range verr.Codes {
			codes[i] = strings.Replace(c, "workspace_", "workspace_key_", 1)
		}
		return SSOLogin{}, core.Invalid(codes...)
	}
	return login, err
}

// AppSSOInput is FeatBit's LoginByOidcCode: the code the provider sent to the
// UI, the UI's redirect URI, and in WorkspaceKey the state the provider sent
// back (FeatBit uses the workspace key as its state; Bunting's state is the
// attempt's, and the workspace is in the attempt).
type AppSSOInput struct {
	Code         string `json:"code"`
	RedirectURI  string `json:"redirectUri"`
	WorkspaceKey string `json:"workspaceKey"`
}

// FinishAppSSO checks FeatBit's UI's answer against the attempt its browser
// kept (sealed): the state must be the attempt's (FinishSSO), and the
// redirect URI the one the attempt began with.
func (s *SSO) FinishAppSSO(ctx context.Context, in AppSSOInput, sealed string) (SSOLogin, error) {
	var v core.Validator
	if strings.TrimSpace(in.Code) == "" {
		v.Add("code", "required")
	}
	if in.RedirectURI == "" {
		v.Add("redirectUri", "required")
	}
	if in.WorkspaceKey == "" {
		v.Add("workspaceKey", "required")
	}
	if err := v.Err(); err != nil {
		return SSOLogin{}, err
	}
	login, err := s.FinishSSO(ctx, in.WorkspaceKey, sealed)
	if err != nil {
		return SSOLogin{}, err
	}
	if login.Next != in.RedirectURI {
		return SSOLogin{}, core.Invalid("redirectUri_is_invalid")
	}
	return login, nil
}

// appRedirectURI tells whether a redirect URI may be kept: where the UI's
// sign-in page is.
func appRedirectURI(raw string) bool {
	if len(raw) > maxRedirectURILen {
		return false
	}
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil && u.Fragment == "" &&
		!strings.ContainsAny(raw, " \t\r\n")
}
