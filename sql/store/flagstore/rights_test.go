package flagstore_test

import (
	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/accesstokens"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/storetest"

	"errors"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"testing"
)

// The rights a page is offered agree with what the operations accept.
func TestFlagRightsFollowTheOperations(t *testing.T) {
	t.Parallel()
	s, owner, _ := storetest.New(t)
	ctx := t.Context()
	prod, _ := storetest.ProdAndDev(t, s, owner)
	_, err := s.Flags().CreateFlag(ctx, owner, prod.ID, flagstore.FlagInput{Name: "Pay", Key: "pay"})
	storetest.Must(t, err)
	as := func(actions ...access.Action) *core.Actor {
		a := *owner
		names := make([]string, len(actions))
		for i, act := range actions {
			names[i] = string(act)
		}
		a.Granted = []access.Statement{{ResourceType: access.TypeFlag, Effect: "allow", Actions: names, Resources: []string{"project/*:env/*:flag/*"}}}
		return &a
	}
	rightsOf := func(a *core.Actor, archived bool) flagstore.FlagRights {
		t.Helper()
		r, err := s.Flags().EnvRights(ctx, a, prod.ID)
		storetest.Must(t, err)
		return r.Flag("pay", nil, archived)
	}

	toggler := as(access.ToggleFlag)
	if r := rightsOf(toggler, false); !r.Toggle || r.Name || r.Targeting || r.Clone || r.Archive || r.Delete {
		t.Errorf("ToggleFlag alone gives %+v", r)
	}
	if _, err := s.Flags().RenameFlag(ctx, toggler, prod.ID, "pay", flagstore.FlagNameInput{Name: "Other"}); !errors.Is(err, core.ErrForbidden) {
		t.Errorf("rename without UpdateFlagName: got %v, want ErrForbidden", err)
	}

	// Cloning needs creating flags as well.
	cloner := as(access.CloneFlag)
	if rightsOf(cloner, false).Clone {
		t.Errorf("CloneFlag without CreateFlag offers cloning")
	}
	if _, err := s.Flags().CloneFlag(ctx, cloner, prod.ID, "pay", flagstore.CloneFlagInput{Name: "Copy", Key: "copy"}); !errors.Is(err, core.ErrForbidden) {
		t.Errorf("clone without CreateFlag: got %v, want ErrForbidden", err)
	}
	if !rightsOf(as(access.CloneFlag, access.CreateFlag), false).Clone {
		t.Errorf("CloneFlag and CreateFlag do not offer cloning")
	}

	// Any one part of targeting opens the editor.
	if !rightsOf(as(access.UpdateFlagDefaultRule), false).Targeting {
		t.Errorf("UpdateFlagDefaultRule does not open the targeting editor")
	}

	// A live flag may be archived, not deleted; an archived one the reverse,
	// and nothing else changes on it.
	keeper := as(access.ArchiveFlag, access.RestoreFlag, access.DeleteFlag, access.UpdateFlagName)
	if r := rightsOf(keeper, false); !r.Archive || r.Restore || r.Delete || !r.Name || !r.Permits(access.DeleteFlag) {
		t.Errorf("live flag: %+v", r)
	}
	if err := s.Flags().DeleteFlag(ctx, keeper, prod.ID, "pay", flagstore.Change{}); !errors.Is(err, flagstore.ErrFlagNotArchived) {
		t.Errorf("delete a live flag: got %v, want ErrFlagNotArchived", err)
	}
	_, err = s.Flags().ArchiveFlag(ctx, keeper, prod.ID, "pay", flagstore.Change{})
	storetest.Must(t, err)
	if r := rightsOf(keeper, true); r.Archive || !r.Restore || !r.Delete || r.Name {
		t.Errorf("archived flag: %+v", r)
	}
	if _, err := s.Flags().RenameFlag(ctx, keeper, prod.ID, "pay", flagstore.FlagNameInput{Name: "Other"}); !errors.Is(err, flagstore.ErrFlagIsArchived) {
		t.Errorf("rename an archived flag: got %v, want ErrFlagIsArchived", err)
	}
}

// A shared segment is offered only what the person may do in every
// environment it is visible in.
func TestSegmentRightsCoverEveryEnvironment(t *testing.T) {
	t.Parallel()
	s, owner, _ := storetest.New(t)
	ctx := t.Context()
	prod, dev := storetest.ProdAndDev(t, s, owner)
	orgs, err := s.IAM().ListOrganizations(ctx, owner)
	storetest.Must(t, err)
	var orgKey string
	for _, o := range orgs {
		if o.ID == owner.OrgID {
			orgKey = o.Key
		}
	}
	shared, err := s.Segments().CreateSegment(ctx, owner, dev.ID, segments.SegmentInput{Name: "Beta", Key: "beta", Type: flagstore.SegmentShared,
		Scopes: []string{"organization/" + orgKey + ":project/web:env/*"}})
	storetest.Must(t, err)
	local, err := s.Segments().CreateSegment(ctx, owner, dev.ID, segments.SegmentInput{Name: "Local", Key: "local", Type: flagstore.SegmentEnvironmentSpecific})
	storetest.Must(t, err)

	devOnly := *owner
	devOnly.Granted = []access.Statement{
		{ResourceType: access.TypeEnv, Effect: "allow", Actions: []string{string(access.CanAccessEnv)}, Resources: []string{"project/*:env/*"}},
		{ResourceType: access.TypeSegment, Effect: "allow", Actions: []string{string(access.UpdateSegmentName)}, Resources: []string{"project/web:env/" + dev.Key + ":segment/*"}},
	}
	r, err := s.Flags().SegmentRights(ctx, &devOnly, dev.ID, shared)
	storetest.Must(t, err)
	if r.Name {
		t.Errorf("renaming a segment shared with %s is offered to someone who may rename only in %s", prod.Key, dev.Key)
	}
	if _, err := s.Segments().RenameSegment(ctx, &devOnly, dev.ID, shared.ID, segments.SegmentNameInput{Name: "Other"}); !errors.Is(err, core.ErrForbidden) {
		t.Errorf("rename the shared segment: got %v, want ErrForbidden", err)
	}
	r, err = s.Flags().SegmentRights(ctx, &devOnly, dev.ID, local)
	storetest.Must(t, err)
	if !r.Name || r.Tags || r.Delete {
		t.Errorf("environment-specific segment: %+v", r)
	}
}

// A Service token grants permissions, so creating one needs managing IAM too.
func TestAccessTokenRightsFollowTheOperations(t *testing.T) {
	t.Parallel()
	s, owner, _ := storetest.New(t)
	dev := *owner
	dev.Granted = []access.Statement{{ResourceType: access.TypeAccessToken, Effect: "allow",
		Actions: []string{string(access.ManagePersonalAccessTokens), string(access.ManageServiceAccessTokens)}, Resources: []string{core.AccessTokenRN}}}
	if r := accesstokens.AccessTokenRights(&dev, core.TokenService); r.Create || r.SetPermissions {
		t.Errorf("service tokens without IAM: %+v", r)
	}
	if r := accesstokens.AccessTokenAccess(&dev, accesstokens.AccessToken{Type: core.TokenService}); !r.Edit || !r.Disable || !r.Enable || !r.Delete {
		t.Errorf("a service token, managing service tokens: %+v", r)
	}
	if r := accesstokens.AccessTokenRights(&dev, core.TokenPersonal); !r.Create {
		t.Errorf("personal tokens: %+v", r)
	}
	if r := accesstokens.AccessTokenAccess(&dev, accesstokens.AccessToken{Type: core.TokenPersonal, Creator: core.TokenCreator{ID: dev.UserID}}); !r.Edit || !r.Disable || !r.Enable || !r.Delete {
		t.Errorf("one's own personal token: %+v", r)
	}
	_, err := s.Tokens().CreateAccessToken(t.Context(), &dev, accesstokens.AccessTokenInput{Name: "CI", Type: core.TokenService,
		Permissions: []access.Statement{{ID: "t", ResourceType: access.TypeFlag, Effect: "allow", Actions: []string{string(access.ToggleFlag)}, Resources: []string{"project/*:env/*:flag/*"}}}})
	if !errors.Is(err, core.ErrForbidden) {
		t.Errorf("create a Service token without IAM: got %v, want ErrForbidden", err)
	}
	if r := accesstokens.AccessTokenRights(owner, core.TokenService); !r.Create || !r.SetPermissions {
		t.Errorf("the owner: %+v", r)
	}
}
