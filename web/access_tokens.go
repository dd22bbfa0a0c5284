package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/jsonbody"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/views"
	"github.com/bunting-flags/bunting/web/httpx"
)

const tokenPageSize = 10

// accessTokens lists the organization's access tokens, a page at a time.
func (p *pages) accessTokens(c echo.Context) error {
	return p.accessTokensPage(c, http.StatusOK, p.tokenCreate(c, nil), nil, nil)
}

// tokenCreate is the creation form, offering only the token types the person
// may create; values carry a form just posted.
func (p *pages) tokenCreate(c echo.Context, values map[string]string) *views.Form {
	if len(p.tokenTypes(c)) == 0 {
		return nil
	}
	if values == nil {
		values = map[string]string{"type": core.TokenPersonal}
	}
	f := p.form(c, "token-create", "/access-tokens", values)
	return &f
}

func (p *pages) tokenTypes(c echo.Context) []string {
	var types []string
	for _, typ := range []string{core.TokenPersonal, core.TokenService} {
		if accesstokens.AccessTokenRights(actor(c), typ).Create {
			types = append(types, typ)
		}
	}
	return types
}

// accessTokensPage renders the page at the page number the request names
// ("page", from 1); editing is the state of the creation form's statement
// editor, nil for a fresh one; created is the token just created, shown this once.
func (p *pages) accessTokensPage(c echo.Context, status int, create *views.Form, editing *tokenEdit, created *views.CreatedToken) error {
	a := actor(c)
	number := pageNumber(c.FormValue("page"))
	search := c.FormValue("q")
	tokens, err := p.store.Tokens().ListAccessTokens(c.Request().Context(), a,
		accesstokens.AccessTokenFilter{Name: search, Page: core.Page{Index: number - 1, Size: tokenPageSize}})
	if err != nil {
		return err
	}
	list := views.TokenList{CSRF: csrfToken(c), Page: strconv.Itoa(number), Search: search}
	for _, t := range tokens.Items {
		row := views.TokenRow{ID: t.ID.String(), Name: t.Name, Type: t.Type, Status: t.Status, Preview: t.Preview,
			Creator: t.Creator.Email, LastUsed: "Never", Active: t.Status == core.TokenActive}
		if t.LastUsedAt != nil {
			row.LastUsed = t.LastUsedAt.Format("2006-01-02 15:04 UTC")
		}
		may := accesstokens.AccessTokenAccess(a, t)
		if row.Active && may.Disable || !row.Active && may.Enable {
			row.ToggleAction = "/access-tokens/" + t.ID.String() + "/toggle"
		}
		if may.Delete {
			row.DeleteAction = "/access-tokens/" + t.ID.String() + "/delete"
		}
		if may.Edit {
			row.EditHref = "/access-tokens/" + t.ID.String()
		}
		list.Rows = append(list.Rows, row)
	}
	list.Pager = pager(tokens.TotalCount, number, tokenPageSize, "token", "tokens", func(n int) string { return tokensHref(n, search) })

	tc := views.TokenCreate{Form: create, Created: created}
	if create != nil {
		tc.Types = options(create.Values["type"], p.tokenTypes(c)...)
		if slices.Contains(p.tokenTypes(c), core.TokenService) {
			if editing == nil { // a new Service token starts with one statement to fill in
				editing = &tokenEdit{drafts: []draft{{st: access.Statement{ResourceType: access.TypeFlag, Effect: "allow",
					Actions: []string{}, Resources: []string{}}}}}
			}
			e, err := p.editor(c.Request().Context(), a, "token-create", editing.drafts, false, editing.problems, editing.refused)
			if err != nil {
				return err
			}
			tc.Editor = &e
		}
	}
	return p.respond(c, status, "Access tokens", navAccessTokens, func(shell views.Shell) templ.Component {
		return views.AccessTokensPage(views.AccessTokens{Shell: shell, Create: tc, List: list})
	}, views.TokenCreateView(tc), views.TokenListView(list))
}

// createAccessToken creates a token and shows its value once. The answer is
// the page itself, not a redirect, because the value must never be stored
// for a later request.
func (p *pages) createAccessToken(c echo.Context) error {
	var posted tokenForm
	if err := bind(c, &posted); err != nil {
		return err
	}
	in := accesstokens.AccessTokenInput{Name: posted.Name, Type: posted.Type}
	raw := strings.TrimSpace(c.FormValue("permissions"))
	values := map[string]string{"name": in.Name, "type": in.Type, "permissions": raw}
	ds, editing, err := editedDrafts(c, "token-create")
	if err != nil {
		return err
	}
	if editing {
		return p.accessTokensPage(c, http.StatusOK, p.tokenCreate(c, values), &tokenEdit{drafts: ds}, nil)
	}
	// Statements pasted as JSON win over the editor's.
	switch {
	case raw != "":
		if jsonbody.Decode([]byte(raw), &in.Permissions) != nil {
			// JSON that does not parse is sent on as a statement that is
			// never valid: the store then refuses it with every other
			// problem of the form at once, and creates nothing.
			in.Permissions = []access.Statement{{}}
		}
	case in.Type == core.TokenService && c.FormValue("statements") == "edited":
		in.Permissions = statements(ds)
	}
	var t accesstokens.AccessToken
	if err == nil && !p.limits.AllowTokenMint(actor(c)) {
		err = core.ErrTooManyRequests
	}
	if err == nil {
		t, err = p.store.Tokens().CreateAccessToken(c.Request().Context(), actor(c), in)
	}
	if err == nil {
		c.Set(flashKey, []views.Flash{{Kind: "success", Text: fmt.Sprintf("Access token “%s” created.", t.Name)}})
		return p.accessTokensPage(c, http.StatusOK, p.tokenCreate(c, nil), nil, &views.CreatedToken{Name: t.Name, Value: t.Token})
	}
	f := p.tokenCreate(c, values)
	if f == nil {
		return err
	}
	status, err := formProblems(err, f, "name", "type", "permissions")
	if err != nil {
		return err
	}
	edited := &tokenEdit{drafts: ds}
	if raw == "" && f.Errors["permissions"] != "" { // the editor's statements: shown next to them
		delete(f.Errors, "permissions")
		edited.problems, edited.refused = statementRefusal(in.Permissions)
	}
	return p.accessTokensPage(c, status, f, edited, nil)
}

// statementRefusal explains statements a Service token was refused.
func statementRefusal(sts []access.Statement) (map[int][]string, string) {
	problems := access.StatementProblems(sts)
	if len(problems) == 0 {
		return nil, "A Service token needs at least one statement."
	}
	return problems, ""
}

// toggleAccessToken activates or deactivates a token.
func (p *pages) toggleAccessToken(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	t, err := p.store.Tokens().ToggleAccessToken(c.Request().Context(), actor(c), id)
	if err != nil {
		return err
	}
	verb := "deactivated"
	if t.Status == core.TokenActive {
		verb = "activated"
	}
	return p.changed(c, tokensHref(postedPage(c), c.FormValue("q")), fmt.Sprintf("Access token “%s” %s.", t.Name, verb), func() error {
		return p.accessTokensPage(c, http.StatusOK, p.tokenCreate(c, nil), nil, nil)
	})
}

// deleteAccessToken deletes a token for good.
func (p *pages) deleteAccessToken(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	if err := p.store.Tokens().DeleteAccessToken(c.Request().Context(), actor(c), id); err != nil {
		return err
	}
	return p.changed(c, tokensHref(postedPage(c), c.FormValue("q")), "Access token deleted.", func() error {
		return p.accessTokensPage(c, http.StatusOK, p.tokenCreate(c, nil), nil, nil)
	})
}

// postedPage is the page number a row action was posted from.
func postedPage(c echo.Context) int { return max(1, pageNumber(c.FormValue("page"))) }

// tokensHref is a page of the token list, narrowed to names containing search.
func tokensHref(number int, search string) string {
	v := url.Values{"page": {strconv.Itoa(number)}}
	if search != "" {
		v.Set("q", search)
	}
	return "/access-tokens?" + v.Encode()
}

func tokenHref(id uuid.UUID) string { return "/access-tokens/" + id.String() }

// accessToken shows a token's page: its name and, for a Service token, its
// statements in the editor policies use.
func (p *pages) accessToken(c echo.Context) error {
	return p.accessTokenPage(c, http.StatusOK, nil)
}

// tokenEdit is the state of the token form just posted.
type tokenEdit struct {
	form     views.Form
	drafts   []draft
	problems map[int][]string
	refused  string
}

// accessTokenPage renders a token's page, or its form for htmx.
func (p *pages) accessTokenPage(c echo.Context, status int, edited *tokenEdit) error {
	id, t, err := byPathID(c, p.store.Tokens().GetAccessToken)
	if err != nil {
		return err
	}
	ctx, a := c.Request().Context(), actor(c)
	if !accesstokens.AccessTokenAccess(a, t).Edit {
		return core.ErrForbidden // the page only edits; the list shows the token
	}
	may := accesstokens.AccessTokenRights(a, t.Type)
	href := tokenHref(id)
	if edited == nil {
		edited = &tokenEdit{form: p.form(c, "token", href, map[string]string{"name": t.Name}), drafts: drafts(t.Permissions)}
	}
	vm := views.AccessToken{Name: t.Name, Type: t.Type, Status: t.Status, Preview: t.Preview, Form: edited.form,
		Crumbs: []views.Crumb{{Label: "Access tokens", Href: "/access-tokens"}}}
	if t.Type == core.TokenService {
		e, err := p.editor(ctx, a, "token", edited.drafts, !may.SetPermissions, edited.problems, edited.refused)
		if err != nil {
			return err
		}
		vm.Editor = &e
	}
	return p.respond(c, status, t.Name, navAccessTokens, func(shell views.Shell) templ.Component {
		vm.Shell = shell
		return views.AccessTokenPage(vm)
	}, views.AccessTokenHeading(vm), views.AccessTokenForm(vm))
}

// updateAccessToken renames a token and, for a Service token edited by
// someone who manages IAM, edits or stores its statements.
func (p *pages) updateAccessToken(c echo.Context) error {
	id, err := httpx.PathID(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	a := actor(c)
	href := tokenHref(id)
	in := accesstokens.AccessTokenInput{Name: c.FormValue("name")}
	edited := &tokenEdit{form: p.form(c, "token", href, map[string]string{"name": in.Name})}
	if edited.drafts, err = postedDrafts(c); err != nil {
		return err
	}
	var editing bool
	if edited.drafts, editing = edit(edited.drafts, c.FormValue("op"), postedPreset(c)); editing {
		return p.accessTokenPage(c, http.StatusOK, edited)
	}
	// The editor is there, and may be changed, when it posts its marker.
	if c.FormValue("statements") == "edited" {
		in.Permissions = statements(edited.drafts)
	}
	tok, err := p.store.Tokens().UpdateAccessToken(ctx, a, id, in)
	if err == nil {
		return p.changed(c, href, fmt.Sprintf("Access token “%s” saved.", tok.Name), func() error { return p.accessTokenPage(c, http.StatusOK, nil) })
	}
	status, err := formProblems(err, &edited.form, "name", "permissions")
	if err != nil {
		return err
	}
	// Problems with the statements are shown in the editor, next to them.
	if edited.form.Errors["permissions"] != "" {
		delete(edited.form.Errors, "permissions")
		edited.problems, edited.refused = statementRefusal(in.Permissions)
	}
	return p.accessTokenPage(c, status, edited)
}
