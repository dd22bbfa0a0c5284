package accesstokens

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
)

// AccessToken is an API credential. Token is whole only in the answer to its
// creation; afterwards it is masked as FeatBit lists it (maskedToken) and
// Preview identifies it.
type AccessToken struct {
	ID          uuid.UUID          `json:"id"`
	Name        string             `json:"name"`
	Type        string             `json:"type"`
	Status      string             `json:"status"`
	Token       string             `json:"token,omitempty"`
	Preview     string             `json:"preview"`
	Permissions []access.Statement `json:"permissions"`
	Creator     core.TokenCreator  `json:"creator"`
	LastUsedAt  *time.Time         `json:"lastUsedAt"`
	CreatedAt   time.Time          `json:"createdAt"`
	UpdatedAt   time.Time          `json:"updatedAt"`
}

// AccessTokenInput creates a token (name, type, and for Service tokens their
// statements) or updates one (name; permissions when given).
type AccessTokenInput struct {
	Name        string             `json:"name"`
	Type        string             `json:"type"`
	Permissions []access.Statement `json:"permissions"`
}

// AccessTokenFilter selects a page of tokens by part of their name.
type AccessTokenFilter struct {
	Name string
	// Type is Personal or Service; empty for both.
	Type string
	// CreatorID selects the tokens one user made; nil for all.
	CreatorID *uuid.UUID
	Page      core.Page
}

// TokenAction is the action that manages access tokens of a type.
func TokenAction(typ string) access.Action {
	if typ == core.TokenService {
		return access.ManageServiceAccessTokens
	}
	return access.ManagePersonalAccessTokens
}

// mayManageToken checks that a person may create, rename, toggle or delete
// tokens of a type; a Personal token of someone else's needs more (TokenAccess).
func mayManageToken(a *core.Actor, typ string) error {
	return a.Require(TokenAction(typ), core.AccessTokenRN)
}

// TokenAccess tells what a person may do with one token.
type TokenAccess struct {
	// Edit is renaming it (and, with SetPermissions, a Service token's statements).
	Edit bool
	// Disable is turning it off, Enable turning it on again.
	Disable, Enable bool
	Delete          bool
}

// AccessTokenAccess answers what a person may do with one token. A Service
// token is the organization's: whoever manages Service tokens manages it. A
// Personal token is its creator's, who manages it while allowed to manage
// Personal tokens; everyone else may at most list it, except that those who
// manage members (CanManageIAM), and so could remove its creator, may turn
// it off. Turning it on again, renaming and deleting stay with its creator,
// whose scripts it serves (FeatBit lets anyone allowed
// ManagePersonalAccessTokens do all of it to anyone's).
func AccessTokenAccess(a *core.Actor, t AccessToken) TokenAccess {
	manages := mayManageToken(a, t.Type) == nil
	if t.Type == core.TokenService {
		return TokenAccess{Edit: manages, Disable: manages, Enable: manages, Delete: manages}
	}
	own := manages && ownsToken(a, t)
	return TokenAccess{Edit: own, Enable: own, Delete: own, Disable: own || a.Can(access.CanManageIAM, core.IAMRN)}
}

// ownsToken reports whether the actor is the person who created a token: the
// person signed in, or through one of their Personal tokens (which act as
// them), never a Service token they made, which acts on its own statements.
func ownsToken(a *core.Actor, t AccessToken) bool {
	return a.UserID == t.Creator.ID && !a.ServiceToken
}

// maySetTokenPermissions checks that a person may give a Service token
// permissions: only someone who manages IAM may grant them.
func maySetTokenPermissions(a *core.Actor) error { return a.Require(access.CanManageIAM, core.IAMRN) }

// mayCreateToken checks that a person may create a token of a type; a
// Service token is created with permissions.
func mayCreateToken(a *core.Actor, typ string) error {
	if err := mayManageToken(a, typ); err != nil {
		return err
	}
	if typ == core.TokenService {
		return maySetTokenPermissions(a)
	}
	return nil
}

// checkPermissions validates statements given for a token: a Service token
// needs valid ones, a Personal token acts with its creator's and takes none.
func checkPermissions(v *core.Validator, typ string, permissions []access.Statement) {
	if typ != core.TokenService {
		if len(permissions) > 0 {
			v.Add("permissions", "invalid")
		}
		return
	}
	if len(permissions) == 0 || !access.ValidStatements(permissions) {
		v.Add("permissions", "invalid")
	}
}

// CreateAccessToken creates a token and returns it with its value, shown
// this once. How many one account or address may create is the surfaces'
// limit (web/limit).
func (s *Tokens) CreateAccessToken(ctx context.Context, a *core.Actor, in AccessTokenInput) (AccessToken, error) {
	orgID, err := a.Org()
	if err != nil {
		return AccessToken{}, err
	}
	if a.IsToken() { // an access token cannot mint access tokens
		return AccessToken{}, core.ErrForbidden
	}
	var v core.Validator
	v.Required("name", in.Name, core.MaxNameLen)
	v.OneOf("type", in.Type, core.TokenPersonal, core.TokenService)
	checkPermissions(&v, in.Type, in.Permissions)
	if err := v.Err(); err != nil {
		return AccessToken{}, err
	}
	if err := mayCreateToken(a, in.Type); err != nil {
		return AccessToken{}, err
	}
	if in.Permissions == nil {
		in.Permissions = []access.Statement{}
	}
	perms, err := json.Marshal(in.Permissions)
	if err != nil {
		return AccessToken{}, err
	}
	random := make([]byte, 32)
	rand.Read(random)
	body := base64.RawURLEncoding.EncodeToString(random)
	token := iam.AccessTokenPrefix + body
	sum := sha256.Sum256([]byte(token))

	var out AccessToken
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		row, err := q.CreateAccessToken(ctx, db.CreateAccessTokenParams{OrganizationID: orgID, CreatorID: a.UserID,
			Name: strings.TrimSpace(in.Name), Type: in.Type, TokenHash: sum[:],
			Preview: iam.AccessTokenPrefix + body[:4] + "…" + body[len(body)-4:], Permissions: perms})
		if err != nil {
			return err
		}
		user, err := q.GetUser(ctx, a.UserID)
		if err != nil {
			return err
		}
		if out, err = accessToken(row, core.TokenCreator{ID: user.ID, Name: user.Name, Email: user.Email}); err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "AccessToken", RefID: row.ID.String(), Keyword: row.Name,
			Operation: core.OpCreate, Current: out})
	})
	out.Token = token
	return out, err
}

// ListAccessTokens pages the organization's tokens, newest first.
func (s *Tokens) ListAccessTokens(ctx context.Context, a *core.Actor, f AccessTokenFilter) (core.Paged[AccessToken], error) {
	orgID, err := a.Org()
	if err != nil {
		return core.Paged[AccessToken]{}, err
	}
	var v core.Validator
	f.Page.Check(&v)
	v.Text("name", f.Name, core.MaxNameLen)
	if f.Type != "" && f.Type != core.TokenPersonal && f.Type != core.TokenService {
		v.Add("type", "invalid")
	}
	if err := v.Err(); err != nil {
		return core.Paged[AccessToken]{}, err
	}
	if err := core.MayListAccessTokens(a); err != nil {
		return core.Paged[AccessToken]{}, err
	}
	rows, err := s.core.Q.ListAccessTokens(ctx, db.ListAccessTokensParams{OrganizationID: orgID, Name: core.EscapeLike(f.Name),
		Type: f.Type, CreatorID: f.CreatorID, PageSize: f.Page.Limit(), PageOffset: f.Page.Offset()})
	return core.PageOfChecked(rows, err, func(r db.ListAccessTokensRow) (AccessToken, error) {
		return accessToken(r.AccessToken, core.TokenCreator{ID: r.AccessToken.CreatorID, Name: r.CreatorName, Email: r.CreatorEmail})
	}, func() (int64, error) {
		return s.core.Q.CountAccessTokens(ctx, db.CountAccessTokensParams{OrganizationID: orgID, Name: core.EscapeLike(f.Name),
			Type: f.Type, CreatorID: f.CreatorID})
	})
}

// GetAccessToken returns one of the organization's tokens.
func (s *Tokens) GetAccessToken(ctx context.Context, a *core.Actor, id uuid.UUID) (AccessToken, error) {
	orgID, err := a.Org()
	if err != nil {
		return AccessToken{}, err
	}
	row, err := s.core.Q.GetAccessToken(ctx, db.GetAccessTokenParams{OrganizationID: orgID, ID: id})
	if err != nil {
		return AccessToken{}, core.Translate(err)
	}
	return accessToken(row.AccessToken, core.TokenCreator{ID: row.AccessToken.CreatorID, Name: row.CreatorName, Email: row.CreatorEmail})
}

// UpdateAccessToken renames a token and, for a Service token, replaces its statements.
func (s *Tokens) UpdateAccessToken(ctx context.Context, a *core.Actor, id uuid.UUID, in AccessTokenInput) (AccessToken, error) {
	before, err := s.GetAccessToken(ctx, a, id)
	if err != nil {
		return AccessToken{}, err
	}
	var v core.Validator
	v.Required("name", in.Name, core.MaxNameLen)
	changesPermissions := in.Permissions != nil && !slices.EqualFunc(in.Permissions, before.Permissions, sameStatement)
	if changesPermissions {
		checkPermissions(&v, before.Type, in.Permissions)
	}
	if err := v.Err(); err != nil {
		return AccessToken{}, err
	}
	if !AccessTokenAccess(a, before).Edit {
		return AccessToken{}, core.ErrForbidden
	}
	if changesPermissions {
		if err := maySetTokenPermissions(a); err != nil {
			return AccessToken{}, err
		}
	} else {
		in.Permissions = before.Permissions
	}
	perms, err := json.Marshal(in.Permissions)
	if err != nil {
		return AccessToken{}, err
	}
	var out AccessToken
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		row, err := q.UpdateAccessToken(ctx, db.UpdateAccessTokenParams{OrganizationID: a.OrgID, ID: id,
			Name: strings.TrimSpace(in.Name), Permissions: perms})
		if err != nil {
			return err
		}
		if out, err = accessToken(row, before.Creator); err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "AccessToken", RefID: id.String(), Keyword: row.Name,
			Operation: core.OpUpdate, Previous: before, Current: out})
	})
	return out, err
}

func sameStatement(x, y access.Statement) bool {
	return x.ID == y.ID && x.ResourceType == y.ResourceType && x.Effect == y.Effect &&
		slices.Equal(x.Actions, y.Actions) && slices.Equal(x.Resources, y.Resources)
}

// ToggleAccessToken switches a token between Active and Inactive, as
// AccessTokenAccess allows each way.
func (s *Tokens) ToggleAccessToken(ctx context.Context, a *core.Actor, id uuid.UUID) (AccessToken, error) {
	before, err := s.GetAccessToken(ctx, a, id)
	if err != nil {
		return AccessToken{}, err
	}
	may := AccessTokenAccess(a, before)
	status := core.TokenInactive
	if before.Status == core.TokenInactive {
		status = core.TokenActive
	}
	if status == core.TokenInactive && !may.Disable || status == core.TokenActive && !may.Enable {
		return AccessToken{}, core.ErrForbidden
	}
	var out AccessToken
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		row, err := q.SetAccessTokenStatus(ctx, db.SetAccessTokenStatusParams{OrganizationID: a.OrgID, ID: id, Status: status})
		if err != nil {
			return err
		}
		if out, err = accessToken(row, before.Creator); err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "AccessToken", RefID: id.String(), Keyword: row.Name,
			Operation: core.OpUpdate, Previous: before, Current: out})
	})
	return out, err
}

// DeleteAccessToken removes a token for good.
func (s *Tokens) DeleteAccessToken(ctx context.Context, a *core.Actor, id uuid.UUID) error {
	before, err := s.GetAccessToken(ctx, a, id)
	if err != nil {
		return err
	}
	if !AccessTokenAccess(a, before).Delete {
		return core.ErrForbidden
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		if n, err := q.DeleteAccessToken(ctx, db.DeleteAccessTokenParams{OrganizationID: a.OrgID, ID: id}); err != nil || n == 0 {
			return core.OrNotFound(err)
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "AccessToken", RefID: id.String(), Keyword: before.Name,
			Operation: core.OpRemove, Previous: before})
	})
}

func accessToken(r db.AccessToken, creator core.TokenCreator) (AccessToken, error) {
	t := AccessToken{ID: r.ID, Name: r.Name, Type: r.Type, Status: r.Status, Token: maskedToken(r.Preview), Preview: r.Preview, Creator: creator,
		LastUsedAt: core.UTCPtr(r.LastUsedAt), CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if err := json.Unmarshal(r.Permissions, &t.Permissions); err != nil {
		return AccessToken{}, err
	}
	return t, nil
}

// MaskedTokenStars follow the visible start of an access token in lists, as
// FeatBit masks one (its list shows the first characters and asterisks).
const MaskedTokenStars = "*******************"

// maskedToken is the value an access token is listed with: the start its
// preview keeps ("api-" and four characters; FeatBit shows ten, Bunting
// keeps no more than eight) and asterisks.
func maskedToken(preview string) string {
	start, _, _ := strings.Cut(preview, "…")
	return start + MaskedTokenStars
}
