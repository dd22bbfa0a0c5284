package core

import (
	"context"
	"fmt"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/google/uuid"
)

// ChangeRequestSettings is an environment's setting "changes need approval":
// while it is on, a change to what its SDKs get is refused unless it comes
// as an approved change request.
type ChangeRequestSettings struct {
	IsEnabled bool `json:"isEnabled"`
	// ApprovalsRequired is how many reviewers must approve, 1 to 10.
	ApprovalsRequired int `json:"approvalsRequired"`
	// ApproverMemberIDs and ApproverGroupIDs say who may approve: these
	// members, and the members of these groups.
	ApproverMemberIDs []uuid.UUID `json:"approverMemberIds"`
	ApproverGroupIDs  []uuid.UUID `json:"approverGroupIds"`
}

// Change request limits.
const (
	MaxApprovalsRequired = 10
	// MaxApprovers bounds the members and groups named in a setting, and the
	// reviewers of one request.
	MaxApprovers = 100
)

// changeRequestSettings reads an environment's setting.
func changeRequestSettings(e db.Environment) ChangeRequestSettings {
	return ChangeRequestSettings{IsEnabled: e.ChangeRequestEnabled, ApprovalsRequired: int(e.ApprovalsRequired),
		ApproverMemberIDs: OrEmpty(e.ApproverMemberIds), ApproverGroupIDs: OrEmpty(e.ApproverGroupIds)}
}

// check reports the setting's problems that need no database.
func (cr ChangeRequestSettings) check(v *Validator) {
	if cr.ApprovalsRequired < 1 || cr.ApprovalsRequired > MaxApprovalsRequired {
		v.At("approvalsRequired", "invalid", "approvalsRequired",
			fmt.Sprintf("between 1 and %d", MaxApprovalsRequired))
	}
	if len(cr.ApproverMemberIDs) > MaxApprovers || HasDuplicate(cr.ApproverMemberIDs) {
		v.At("approverMemberIds", "invalid", "approverMemberIds", fmt.Sprintf("at most %d members, each once", MaxApprovers))
	}
	if len(cr.ApproverGroupIDs) > MaxApprovers || HasDuplicate(cr.ApproverGroupIDs) {
		v.At("approverGroupIds", "invalid", "approverGroupIds", fmt.Sprintf("at most %d groups, each once", MaxApprovers))
	}
	if cr.IsEnabled && len(cr.ApproverMemberIDs) == 0 && len(cr.ApproverGroupIDs) == 0 {
		v.At("approverMemberIds", "required", "approverMemberIds", "name the members or groups who may approve")
	}
}

func HasDuplicate(ids []uuid.UUID) bool {
	seen := map[uuid.UUID]bool{}
	for _, id := range ids {
		if seen[id] {
			return true
		}
		seen[id] = true
	}
	return false
}

// setChangeRequestSettings stores an environment's setting once its members
// and groups are found in the organization and enough of them may approve.
func setChangeRequestSettings(ctx context.Context, q *db.Queries, orgID, envID uuid.UUID, cr ChangeRequestSettings) (db.Environment, error) {
	members, groups := OrEmpty(cr.ApproverMemberIDs), OrEmpty(cr.ApproverGroupIDs)
	var v Validator
	n, err := q.CountOrganizationUsersIn(ctx, db.CountOrganizationUsersInParams{OrganizationID: orgID, UserIds: members})
	if err != nil {
		return db.Environment{}, err
	}
	if int(n) != len(members) {
		v.At("approverMemberIds", "invalid", "approverMemberIds", "not all are members of the organization")
	}
	if n, err = q.CountOrganizationGroupsIn(ctx, db.CountOrganizationGroupsInParams{OrganizationID: orgID, GroupIds: groups}); err != nil {
		return db.Environment{}, err
	}
	if int(n) != len(groups) {
		v.At("approverGroupIds", "invalid", "approverGroupIds", "not all are groups of the organization")
	}
	if v.Err() == nil && cr.IsEnabled {
		approvers, err := q.ListApprovers(ctx, db.ListApproversParams{OrganizationID: orgID, MemberIds: members, GroupIds: groups})
		if err != nil {
			return db.Environment{}, err
		}
		if len(approvers) < cr.ApprovalsRequired {
			v.At("approvalsRequired", "invalid", "approvalsRequired",
				fmt.Sprintf("only %d members may approve", len(approvers)))
		}
	}
	if err := v.Err(); err != nil {
		return db.Environment{}, err
	}
	return q.SetEnvChangeRequestSettings(ctx, db.SetEnvChangeRequestSettingsParams{ID: envID, Enabled: cr.IsEnabled,
		ApprovalsRequired: int32(cr.ApprovalsRequired), ApproverMemberIds: members, ApproverGroupIds: groups})
}
