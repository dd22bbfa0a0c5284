package iam

// The rules every IAM list keeps (listIAM), on real PostgreSQL: the parent
// is found first, then the filter is checked, then CanManageIAM; a search
// is part of a name, its LIKE characters literal; with All every candidate
// is listed, each marked.

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/store/core"
)

func TestStoreIAMListRules(t *testing.T) {
	s, a, _ := testStore(t)
	ctx := context.Background()
	page := core.Page{Size: 10}
	under, err := s.CreateGroup(ctx, a, GroupInput{Name: "a_b"})
	must(t, err)
	_, err = s.CreateGroup(ctx, a, GroupInput{Name: "axb"})
	must(t, err)
	pol, err := s.CreatePolicy(ctx, a, PolicyInput{Name: "Readers", Key: "readers"})
	must(t, err)
	dev, err := s.AddMember(ctx, a, MemberInput{Email: "dev@example.com", PolicyIDs: []uuid.UUID{core.DeveloperPolicyID}})
	must(t, err)
	devActor, err := s.UserActor(ctx, dev.ID, "", "")
	must(t, err)
	long := strings.Repeat("x", maxSearchLen+1)

	// Which error a list answers, in the frame's order.
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"an unknown group, whatever the filter", func() error {
			_, err := s.ListGroupMembers(ctx, a, uuid.New(), IAMFilter{Search: long, Page: core.Page{Size: 0}})
			return err
		}(), "ResourceNotFound"},
		{"an unknown member", func() error { _, err := s.ListMemberGroups(ctx, a, uuid.New(), IAMFilter{Page: page}); return err }(), "ResourceNotFound"},
		{"an unknown policy", func() error { _, err := s.ListPolicyGroups(ctx, a, uuid.New(), IAMFilter{Page: page}); return err }(), "ResourceNotFound"},
		{"a group search too long", func() error { _, err := s.ListGroups(ctx, a, IAMFilter{Search: long, Page: page}); return err }(), "name_is_invalid"},
		{"a member search too long", func() error { _, err := s.ListMembers(ctx, a, IAMFilter{Search: long, Page: page}); return err }(), "searchText_is_invalid"},
		{"a group's members searched too long", func() error {
			_, err := s.ListGroupMembers(ctx, a, under.ID, IAMFilter{Search: long, Page: page})
			return err
		}(), "searchText_is_invalid"},
		{"a page of none", func() error { _, err := s.ListPolicies(ctx, a, IAMFilter{Page: core.Page{Size: 0}}); return err }(), "pageSize_is_invalid"},
		{"a page past the largest", func() error {
			_, err := s.ListGroups(ctx, a, IAMFilter{Page: core.Page{Size: core.MaxPageSize + 1}})
			return err
		}(), "pageSize_is_invalid"},
		{"a bad filter from someone without CanManageIAM is still a bad filter", func() error {
			_, err := s.ListGroups(ctx, devActor, IAMFilter{Search: long, Page: page})
			return err
		}(), "name_is_invalid"},
	}
	for _, tt := range tests {
		if got := code(tt.err); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	// Someone without CanManageIAM lists nothing, with or without a parent.
	for name, list := range map[string]func() error{
		"groups":        func() error { _, err := s.ListGroups(ctx, devActor, IAMFilter{Page: page}); return err },
		"policies":      func() error { _, err := s.ListPolicies(ctx, devActor, IAMFilter{Page: page}); return err },
		"members":       func() error { _, err := s.ListMembers(ctx, devActor, IAMFilter{Page: page}); return err },
		"group members": func() error { _, err := s.ListGroupMembers(ctx, devActor, under.ID, IAMFilter{Page: page}); return err },
		"own groups":    func() error { _, err := s.ListMemberGroups(ctx, devActor, dev.ID, IAMFilter{Page: page}); return err },
	} {
		if err := list(); !errors.Is(err, core.ErrForbidden) {
			t.Errorf("%s without CanManageIAM: %v, want ErrForbidden", name, err)
		}
	}

	// "_" is a character to find, not LIKE's any one character.
	found, err := s.ListGroups(ctx, a, IAMFilter{Search: " a_b ", Page: page})
	must(t, err)
	if found.TotalCount != 1 || len(found.Items) != 1 || found.Items[0].ID != under.ID {
		t.Errorf("searching a_b: %+v, want the one group a_b", found)
	}

	// A group's policies: attached only, or with All every policy marked,
	// counted as the organization's and the built-ins.
	must(t, s.AddGroupPolicy(ctx, a, under.ID, pol.ID))
	attached, err := s.ListGroupPolicies(ctx, a, under.ID, IAMFilter{Page: page})
	must(t, err)
	if attached.TotalCount != 1 || len(attached.Items) != 1 || attached.Items[0].ID != pol.ID || !attached.Items[0].IsGroupPolicy {
		t.Errorf("the group's policies: %+v, want Readers, marked", attached)
	}
	every, err := s.ListPolicies(ctx, a, IAMFilter{Page: core.Page{Size: core.MaxPageSize}})
	must(t, err)
	all, err := s.ListGroupPolicies(ctx, a, under.ID, IAMFilter{All: true, Page: core.Page{Size: core.MaxPageSize}})
	must(t, err)
	marked := 0
	for _, p := range all.Items {
		if p.IsGroupPolicy {
			marked++
			if p.ID != pol.ID {
				t.Errorf("%s is marked as the group's", p.Name)
			}
		}
	}
	if all.TotalCount != every.TotalCount || int64(len(all.Items)) != all.TotalCount || marked != 1 {
		t.Errorf("every policy for the group: %d of %d, %d marked; want all %d, one marked", len(all.Items), all.TotalCount, marked, every.TotalCount)
	}

	// A member's groups follow their memberships; the count is the page's.
	must(t, s.AddGroupMember(ctx, a, under.ID, dev.ID))
	groups, err := s.ListMemberGroups(ctx, a, dev.ID, IAMFilter{Page: page})
	must(t, err)
	if groups.TotalCount != 1 || len(groups.Items) != 1 || groups.Items[0].ID != under.ID || !groups.Items[0].IsGroupMember || groups.Items[0].MemberID != dev.ID {
		t.Errorf("the member's groups: %+v, want a_b", groups)
	}
	inherited, err := s.ListMemberInheritedPolicies(ctx, a, dev.ID, IAMFilter{Page: page})
	must(t, err)
	if inherited.TotalCount != 1 || len(inherited.Items) != 1 {
		t.Errorf("policies through groups: %+v, want Readers through a_b", inherited)
	}
	// Paging: the second page of one item each holds the rest, the count the same.
	second, err := s.ListGroups(ctx, a, IAMFilter{Page: core.Page{Index: 1, Size: 1}})
	must(t, err)
	if second.TotalCount != 2 || len(second.Items) != 1 || second.Items[0].ID == under.ID {
		t.Errorf("the second page of groups by name: %+v, want axb of 2", second)
	}
}

// The organization keeps a member holding Owner, whichever way it would
// lose the last one: a group that carries it losing it or being deleted,
// the owner leaving the group, or the owner removed.
func TestStoreLastOwnerRules(t *testing.T) {
	s, a, _ := testStore(t)
	ctx := context.Background()
	owners, err := s.CreateGroup(ctx, a, GroupInput{Name: "Owners"})
	must(t, err)
	must(t, s.AddGroupPolicy(ctx, a, owners.ID, core.OwnerPolicyID))
	must(t, s.AddGroupMember(ctx, a, owners.ID, a.UserID))
	// The owner now holds Owner twice: directly, and through the group.
	must(t, s.RemoveMemberPolicy(ctx, a, a.UserID, core.OwnerPolicyID))
	// Only through the group: the group cannot lose it, nor the owner the group.
	tests := []struct {
		name string
		err  error
	}{
		{"the group giving up Owner", s.RemoveGroupPolicy(ctx, a, owners.ID, core.OwnerPolicyID)},
		{"the owner leaving the group", s.RemoveGroupMember(ctx, a, owners.ID, a.UserID)},
		{"the group deleted", s.DeleteGroup(ctx, a, owners.ID)},
		{"the owner removed from the organization", s.RemoveMember(ctx, a, a.UserID)},
	}
	for _, tt := range tests {
		if got := code(tt.err); got != "CannotRemoveLastOwner" {
			t.Errorf("%s: got %q, want CannotRemoveLastOwner", tt.name, got)
		}
	}
	// Nothing of the refused changes stayed.
	held, err := s.ListMemberInheritedPolicies(ctx, a, a.UserID, IAMFilter{Page: core.Page{Size: 10}})
	must(t, err)
	if held.TotalCount != 1 || len(held.Items) != 1 || held.Items[0].ID != core.OwnerPolicyID {
		t.Errorf("after the refusals the owner holds %+v through groups, want Owner", held)
	}
	// A second owner, directly: now the group may go.
	other, err := s.AddMember(ctx, a, MemberInput{Email: "second@example.com", PolicyIDs: []uuid.UUID{core.OwnerPolicyID}})
	must(t, err)
	must(t, s.DeleteGroup(ctx, a, owners.ID))
	// And the second owner is now the last.
	if got := code(s.RemoveMemberPolicy(ctx, a, other.ID, core.OwnerPolicyID)); got != "CannotRemoveLastOwner" {
		t.Errorf("removing the second, now last, owner's policy: got %q, want CannotRemoveLastOwner", got)
	}
	// Adding a policy twice or removing one not held changes nothing and is no error.
	must(t, s.AddMemberPolicy(ctx, a, other.ID, core.OwnerPolicyID))
	must(t, s.RemoveMemberPolicy(ctx, a, other.ID, core.DeveloperPolicyID))
}
