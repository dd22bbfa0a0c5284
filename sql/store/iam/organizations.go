package iam

import (
	"context"
	"slices"
	"strings"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// OrganizationInput renames the current organization and, when
// DefaultPermissions or Settings is given, sets what members added without
// explicit policies or groups get, or the default order of flag lists
// (FeatBit's UpdateOrganization body).
type OrganizationInput struct {
	Name               string                `json:"name"`
	DefaultPermissions *DefaultPermissions   `json:"defaultPermissions"`
	Settings           *OrganizationSettings `json:"settings"`
}

// UpdateOrganization changes the current organization's name (action
// UpdateOrgName), default permissions (UpdateOrgDefaultUserPermissions) and
// flag order (UpdateOrgSortFlagsBy); each action is checked only when its
// part changes, as FeatBit does. Default policies must be the organization's
// or built-in ones, default groups the organization's.
func (s *IAM) UpdateOrganization(ctx context.Context, a *core.Actor, in OrganizationInput) (Organization, error) {
	orgID, err := a.Org()
	if err != nil {
		return Organization{}, err
	}
	row, err := s.core.Q.GetOrganization(ctx, orgID)
	if err != nil {
		return Organization{}, core.Translate(err)
	}
	before := organization(row)
	var v core.Validator
	v.Required("name", in.Name, core.MaxNameLen)
	settings := before.Settings
	if in.Settings != nil {
		settings = *in.Settings
		v.OneOf("flagSortedBy", settings.FlagSortedBy, FlagsByCreatedAt, FlagsByKey)
	}
	if err := v.Err(); err != nil {
		return Organization{}, err
	}
	name := strings.TrimSpace(in.Name)
	defaults := before.DefaultPermissions
	if in.DefaultPermissions != nil {
		defaults = DefaultPermissions{PolicyIDs: distinct(in.DefaultPermissions.PolicyIDs), GroupIDs: distinct(in.DefaultPermissions.GroupIDs)}
	}
	renames := name != before.Name
	redefines := !slices.Equal(defaults.PolicyIDs, before.DefaultPermissions.PolicyIDs) ||
		!slices.Equal(defaults.GroupIDs, before.DefaultPermissions.GroupIDs)
	resorts := settings != before.Settings
	may := core.OrganizationRights(a, before.Key)
	switch {
	case renames && !may.Name, redefines && !may.DefaultPermissions, resorts && !may.SortFlagsBy:
		return Organization{}, core.ErrForbidden
	case !renames && !redefines && !resorts && !may.Name && !may.DefaultPermissions && !may.SortFlagsBy:
		return Organization{}, core.ErrForbidden
	case !renames && !redefines && !resorts:
		return before, nil
	}
	var out Organization
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		if redefines {
			policiesOK, groupsOK, err := checkGrants(ctx, q, orgID, defaults.PolicyIDs, defaults.GroupIDs)
			if err != nil {
				return err
			}
			if !policiesOK || !groupsOK {
				return core.Invalid("defaultPermissions_is_invalid")
			}
		}
		row, err := q.UpdateOrganization(ctx, db.UpdateOrganizationParams{ID: orgID, Name: name,
			DefaultPolicyIds: defaults.PolicyIDs, DefaultGroupIds: defaults.GroupIDs, FlagSortedBy: settings.FlagSortedBy})
		if err != nil {
			return err
		}
		out = organization(row)
		s.core.AccessChanged() // the pages' cached sessions show its name
		return s.core.Audit(ctx, q, a, core.Change{RefType: "Organization", RefID: orgID.String(), Keyword: row.Key,
			Operation: core.OpUpdate, Previous: before, Current: out})
	})
	return out, err
}
