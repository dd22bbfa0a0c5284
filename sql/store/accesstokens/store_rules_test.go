package accesstokens

// The access-token rules that need the database, on real PostgreSQL
// (sql/dbtest): who may create, rename, turn off and on, and delete a
// token, what a token may do itself, and what a list shows.

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/iam"
	"github.com/bunting-flags/bunting/sql/store/seamtest"
)

// testStore is the token seam and the identity seam over one core on a
// fresh database, with its owner signed in.
func testStore(t testing.TB) (*Tokens, *iam.IAM, *core.Actor) {
	c, ids, a, _ := seamtest.Owner(t)
	return New(c, ids), ids, a
}

func TestStoreTokenRules(t *testing.T) {
	s, ids, owner := testStore(t)
	ctx := context.Background()
	// A member allowed Personal tokens only.
	pol, err := ids.CreatePolicy(ctx, owner, iam.PolicyInput{Name: "Scripts", Key: "scripts"})
	seamtest.Must(t, err)
	_, err = ids.UpdatePolicyStatements(ctx, owner, pol.ID, []access.Statement{managePersonal,
		statement("access-token", "allow", "ListAccessTokens", "access-token/*")})
	seamtest.Must(t, err)
	m, err := ids.AddMember(ctx, owner, iam.MemberInput{Email: "dev@example.com", PolicyIDs: []uuid.UUID{pol.ID}})
	seamtest.Must(t, err)
	dev, err := ids.UserActor(ctx, m.ID, "", "")
	seamtest.Must(t, err)

	mine, err := s.CreateAccessToken(ctx, dev, AccessTokenInput{Name: " deploy ", Type: core.TokenPersonal})
	seamtest.Must(t, err)
	if !strings.HasPrefix(mine.Token, iam.AccessTokenPrefix) || len(mine.Token) < 40 || mine.Name != "deploy" || mine.Status != core.TokenActive ||
		mine.Creator.ID != m.ID || len(mine.Permissions) != 0 {
		t.Fatalf("a new Personal token: %+v", mine)
	}
	// What the token itself may do: act as its creator, but mint no token.
	viaToken, err := ids.Authenticate(ctx, iam.Credentials{Authorization: mine.Token})
	seamtest.Must(t, err)
	if viaToken.UserID != m.ID || viaToken.TokenID != mine.ID {
		t.Errorf("the token acts as %v (token %v), want its creator", viaToken.UserID, viaToken.TokenID)
	}
	if _, err := s.CreateAccessToken(ctx, viaToken, AccessTokenInput{Name: "child", Type: core.TokenPersonal}); !errors.Is(err, core.ErrForbidden) {
		t.Errorf("a token minting a token: %v, want ErrForbidden", err)
	}

	tests := []struct {
		name string
		err  error
		want error
	}{
		{"a Service token without CanManageIAM", func() error {
			_, err := s.CreateAccessToken(ctx, dev, AccessTokenInput{Name: "svc", Type: core.TokenService,
				Permissions: []access.Statement{statement("flag", "allow", "ToggleFlag", "project/*:env/*:flag/*")}})
			return err
		}(), core.ErrForbidden},
		{"someone else renaming it, even with CanManageIAM", func() error {
			_, err := s.UpdateAccessToken(ctx, owner, mine.ID, AccessTokenInput{Name: "mine now"})
			return err
		}(), core.ErrForbidden},
		{"someone else deleting it", s.DeleteAccessToken(ctx, owner, mine.ID), core.ErrForbidden},
		{"a token of another organization or none", func() error { _, err := s.GetAccessToken(ctx, dev, uuid.New()); return err }(), core.ErrNotFound},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, tt.err, tt.want)
		}
	}
	var verr *core.ValidationError
	if _, err := s.CreateAccessToken(ctx, owner, AccessTokenInput{Name: "svc", Type: core.TokenService}); !errors.As(err, &verr) || verr.Codes[0] != "permissions_is_invalid" {
		t.Errorf("a Service token without statements: %v, want permissions_is_invalid", err)
	}

	// CanManageIAM turns someone's Personal token off, not on again; its
	// creator may. An inactive token signs nobody in.
	off, err := s.ToggleAccessToken(ctx, owner, mine.ID)
	seamtest.Must(t, err)
	if off.Status != core.TokenInactive {
		t.Errorf("turned off: status %s", off.Status)
	}
	if _, err := ids.Authenticate(ctx, iam.Credentials{Authorization: mine.Token}); !errors.Is(err, core.ErrUnauthenticated) {
		t.Errorf("an inactive token signs in: %v", err)
	}
	if _, err := s.ToggleAccessToken(ctx, owner, mine.ID); !errors.Is(err, core.ErrForbidden) {
		t.Errorf("CanManageIAM turning it on again: %v, want ErrForbidden", err)
	}
	on, err := s.ToggleAccessToken(ctx, dev, mine.ID)
	seamtest.Must(t, err)
	if on.Status != core.TokenActive {
		t.Errorf("turned on by its creator: status %s", on.Status)
	}

	// A Service token carries its own statements; the list filters by type
	// and masks every value.
	svc, err := s.CreateAccessToken(ctx, owner, AccessTokenInput{Name: "ci", Type: core.TokenService,
		Permissions: []access.Statement{statement("flag", "allow", "ToggleFlag", "project/*:env/*:flag/*")}})
	seamtest.Must(t, err)
	if len(svc.Permissions) != 1 {
		t.Errorf("a Service token's statements: %+v", svc.Permissions)
	}
	services, err := s.ListAccessTokens(ctx, dev, AccessTokenFilter{Type: core.TokenService, Page: core.Page{Size: 10}})
	seamtest.Must(t, err)
	if services.TotalCount != 1 || len(services.Items) != 1 || services.Items[0].ID != svc.ID ||
		services.Items[0].Token != strings.SplitN(svc.Preview, "…", 2)[0]+MaskedTokenStars {
		t.Errorf("Service tokens listed: %+v", services)
	}
	both, err := s.ListAccessTokens(ctx, dev, AccessTokenFilter{Name: "DEP", Page: core.Page{Size: 10}})
	seamtest.Must(t, err)
	if both.TotalCount != 1 || len(both.Items) != 1 || both.Items[0].ID != mine.ID {
		t.Errorf("tokens named like DEP: %+v, want deploy", both)
	}

	// Its creator deletes it; then it is gone, and signs nobody in.
	seamtest.Must(t, s.DeleteAccessToken(ctx, dev, mine.ID))
	if _, err := s.GetAccessToken(ctx, dev, mine.ID); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("a deleted token: %v, want ErrNotFound", err)
	}
	if _, err := ids.Authenticate(ctx, iam.Credentials{Authorization: mine.Token}); !errors.Is(err, core.ErrUnauthenticated) {
		t.Errorf("a deleted token signs in: %v", err)
	}
}
