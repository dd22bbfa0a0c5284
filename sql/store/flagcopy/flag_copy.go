package flagcopy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// Comparing and copying flags between two environments of an organization
// (FeatBit's compare-overview, compare-with, copy-to-env-precheck,
// copy-to-env and copy-settings-to). Every one reads the source environment,
// so it needs CanAccessEnv there; what it does in the target is checked as
// the same change made there directly would be. Here: what they share, and
// copying flags to another environment; comparing is in
// flag_compare_envs.go, copying one flag's settings in flag_copy_settings.go.

// MaxCopyFlags bounds the flags of one copy (and of its pre-check).
const MaxCopyFlags = 100

// compareEnvs loads the source (readable) and a target (readable, and not
// the source) of a comparison or copy.
func (s *FlagCopy) compareEnvs(ctx context.Context, a *core.Actor, sourceID, targetID uuid.UUID) (core.EnvRow, core.EnvRow, error) {
	if sourceID == targetID {
		return core.EnvRow{}, core.EnvRow{}, core.Invalid("targetEnvId_is_invalid")
	}
	src, err := s.core.ReadableEnv(ctx, a, sourceID)
	if err != nil {
		return core.EnvRow{}, core.EnvRow{}, err
	}
	tgt, err := s.core.ReadableEnv(ctx, a, targetID)
	return src, tgt, err
}

// flagsByIDs reads some flags of an environment by id.
func (s *FlagCopy) flagsByIDs(ctx context.Context, q *db.Queries, envID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]flagstore.Flag, error) {
	rows, err := q.FlagsByIDs(ctx, db.FlagsByIDsParams{EnvID: envID, Ids: ids})
	if err != nil {
		return nil, core.Translate(err)
	}
	out := make(map[uuid.UUID]flagstore.Flag, len(rows))
	for _, r := range rows {
		f, err := flagstore.FlagFrom(r)
		if err != nil {
			return nil, err
		}
		out[f.ID] = f
	}
	return out, nil
}

// flagSegmentIDs lists the segments a flag's rules name.
func flagSegmentIDs(f flagstore.Flag) []uuid.UUID {
	var ids []uuid.UUID
	for _, r := range f.Rules {
		for _, c := range r.Conditions {
			if c.Property != targeting.SegmentIn && c.Property != targeting.SegmentNotIn {
				continue
			}
			var named []string
			_ = json.Unmarshal([]byte(c.Value), &named)
			for _, id := range named {
				if u, err := uuid.Parse(id); err == nil && !slices.Contains(ids, u) {
					ids = append(ids, u)
				}
			}
		}
	}
	return ids
}

// visibleSegments returns those of some segments visible in env.
func (s *FlagCopy) visibleSegments(ctx context.Context, q *db.Queries, env core.EnvRow, ids []uuid.UUID) ([]flagstore.Segment, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := q.SegmentsByIDs(ctx, db.SegmentsByIDsParams{OrganizationID: env.OrganizationID, Ids: ids,
		EnvID: env.Environment.ID, Scopes: flagstore.EnvScopes(env)})
	if err != nil {
		return nil, core.Translate(err)
	}
	return segments.SegmentsFrom(rows)
}

// environmentByID loads an environment of an organization, with no check:
// for callers that checked it already.
func (s *FlagCopy) environmentByID(ctx context.Context, orgID, envID uuid.UUID) (core.EnvRow, error) {
	row, err := s.core.Q.GetEnvironment(ctx, db.GetEnvironmentParams{OrganizationID: orgID, ID: envID})
	return core.EnvRow{GetEnvironmentRow: row}, core.Translate(err)
}

// NamedSegment names a segment a flag uses.
type NamedSegment struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// segmentsNotVisible lists the segments f's rules use that target cannot
// use: not visible there (an environment-specific segment of another
// environment, a shared one whose scopes leave it out) or archived.
func (s *FlagCopy) segmentsNotVisible(ctx context.Context, q *db.Queries, target core.EnvRow, f flagstore.Flag) ([]NamedSegment, error) {
	ids := flagSegmentIDs(f)
	if len(ids) == 0 {
		return nil, nil
	}
	usable, err := s.visibleSegments(ctx, q, target, ids)
	if err != nil {
		return nil, err
	}
	ok := map[uuid.UUID]bool{}
	for _, sg := range usable {
		ok[sg.ID] = !sg.IsArchived
	}
	var missing []NamedSegment
	for _, id := range ids {
		if !ok[id] {
			missing = append(missing, NamedSegment{ID: id.String(), Name: s.segmentName(ctx, q, target.OrganizationID, id)})
		}
	}
	return missing, nil
}

// segmentName names any segment of an organization, for a message; an
// unknown one is "a deleted segment", as the history says.
func (s *FlagCopy) segmentName(ctx context.Context, q *db.Queries, orgID, id uuid.UUID) string {
	row, err := q.GetSegment(ctx, db.GetSegmentParams{OrganizationID: orgID, ID: id})
	if err != nil {
		return "a deleted segment"
	}
	return row.Name
}

// CopyToEnvPrecheckResult is FeatBit's pre-check of copying one flag, with
// Bunting's names of what conflicts. KeyCheck: the key is free in the
// target. TargetUserCheck: the flag has no individual targets (a copy never
// takes them: end users are per environment). TargetRuleCheck: every segment
// its rules use is visible in the target (otherwise the copy has no rules).
// PermissionCheck: the caller may create the flag there.
type CopyToEnvPrecheckResult struct {
	ID                 uuid.UUID      `json:"id"`
	Key                string         `json:"key"`
	Name               string         `json:"name"`
	KeyCheck           bool           `json:"keyCheck"`
	TargetUserCheck    bool           `json:"targetUserCheck"`
	TargetRuleCheck    bool           `json:"targetRuleCheck"`
	PermissionCheck    bool           `json:"permissionCheck"`
	NewProperties      []string       `json:"newProperties"`
	SegmentsNotVisible []NamedSegment `json:"segmentsNotVisible"`
	Passed             bool           `json:"passed"`
}

// copyIDs checks the ids of a copy: some, at most MaxCopyFlags, no repeats.
func copyIDs(ids []uuid.UUID) ([]uuid.UUID, error) {
	out := []uuid.UUID{}
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	if len(out) == 0 || len(out) > MaxCopyFlags {
		return nil, core.Invalid("flagIds_is_invalid")
	}
	return out, nil
}

// CopyToEnvPrecheck says, for each flag, what copying it to the target
// environment would run into. Every id must be a flag of the source.
func (s *FlagCopy) CopyToEnvPrecheck(ctx context.Context, a *core.Actor, sourceEnvID, targetEnvID uuid.UUID, flagIDs []uuid.UUID) ([]CopyToEnvPrecheckResult, error) {
	ids, err := copyIDs(flagIDs)
	if err != nil {
		return nil, err
	}
	srcEnv, tgtEnv, err := s.compareEnvs(ctx, a, sourceEnvID, targetEnvID)
	if err != nil {
		return nil, err
	}
	return s.precheck(ctx, s.core.Q, a, srcEnv, tgtEnv, ids)
}

// mayCopyFlagTo checks that a person may copy src from srcEnv into tgtEnv:
// CopyFlagTo on it where it is (FeatBit's action, which its UI checks before
// it offers the copy) and CreateFlag for it in the target.
func mayCopyFlagTo(a *core.Actor, srcEnv, tgtEnv core.EnvRow, src flagstore.Flag) error {
	if err := a.Require(access.CopyFlagTo, flagstore.EnvFlagRN(srcEnv, src.Key, src.Tags)); err != nil {
		return err
	}
	return a.Require(access.CreateFlag, flagstore.EnvFlagRN(tgtEnv, src.Key, src.Tags))
}

func (s *FlagCopy) precheck(ctx context.Context, q *db.Queries, a *core.Actor, srcEnv, tgtEnv core.EnvRow, ids []uuid.UUID) ([]CopyToEnvPrecheckResult, error) {
	flags, err := s.flagsByIDs(ctx, q, srcEnv.Environment.ID, ids)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(flags))
	for _, id := range ids {
		f, ok := flags[id]
		if !ok {
			return nil, core.ErrNotFound
		}
		keys = append(keys, strings.ToLower(f.Key))
	}
	taken, err := q.FlagKeysUsed(ctx, db.FlagKeysUsedParams{EnvID: tgtEnv.Environment.ID, Keys: keys})
	if err != nil {
		return nil, core.Translate(err)
	}
	known, err := q.EndUserPropertyNames(ctx, db.EndUserPropertyNamesParams{EnvID: tgtEnv.Environment.ID, Lim: core.MaxEndUserProperties})
	if err != nil {
		return nil, core.Translate(err)
	}
	out := make([]CopyToEnvPrecheckResult, len(ids))
	for i, id := range ids {
		f := flags[id]
		missing, err := s.segmentsNotVisible(ctx, q, tgtEnv, f)
		if err != nil {
			return nil, err
		}
		r := CopyToEnvPrecheckResult{ID: f.ID, Key: f.Key, Name: f.Name,
			KeyCheck:        !slices.ContainsFunc(taken, func(k string) bool { return strings.EqualFold(k, f.Key) }),
			TargetUserCheck: !hasTargets(f), TargetRuleCheck: len(missing) == 0,
			PermissionCheck: mayCopyFlagTo(a, srcEnv, tgtEnv, f) == nil,
			NewProperties:   newProperties(f.Rules, known), SegmentsNotVisible: core.OrEmpty(missing)}
		r.Passed = r.KeyCheck && r.TargetUserCheck && r.TargetRuleCheck && r.PermissionCheck
		out[i] = r
	}
	return out, nil
}

// newProperties names the user properties the rules test that the target
// environment has not seen (FeatBit's GetNewProperties): a copy adds them
// there, so its rule editors suggest them.
func newProperties(rules []flagstore.FlagRule, known []string) []string {
	out := []string{}
	for _, r := range rules {
		for _, c := range r.Conditions {
			if c.Property == targeting.SegmentIn || c.Property == targeting.SegmentNotIn || c.Property == "keyId" || c.Property == "name" {
				continue
			}
			if !slices.Contains(known, c.Property) && !slices.Contains(out, c.Property) {
				out = append(out, c.Property)
			}
		}
	}
	return out
}

func hasTargets(f flagstore.Flag) bool {
	return slices.ContainsFunc(f.TargetUsers, func(t flagstore.TargetUser) bool { return len(t.KeyIDs) > 0 })
}

// CopyToEnvInput is FeatBit's CopyToEnv body. PrecheckResults are accepted
// for FeatBit's clients and ignored: the server checks again, inside the copy.
type CopyToEnvInput struct {
	FlagIDs         []uuid.UUID       `json:"flagIds"`
	PrecheckResults []json.RawMessage `json:"precheckResults"`
	// NewFlagRequest is the change request each copy comes in with where
	// the target environment's changes need approval: one per flag.
	flagstore.NewFlagRequest
}

// CopyToEnvResult is FeatBit's CopyToEnvResult, with the change requests
// the copies came in with where the target's changes need approval.
type CopyToEnvResult struct {
	CopiedCount     int                         `json:"copiedCount"`
	PendingApproval []flagstore.RequestedChange `json:"pendingApproval,omitempty"`
}

// CopyToEnv copies flags to another environment as new flags of the same
// key: all of them with their history entries, or none. As FeatBit copies,
// a copy has no individual targets, and no rules when its rules use a
// segment the target cannot; a key taken in the target refuses the whole
// copy, naming each such flag. Each copy needs CopyFlagTo on the flag and
// CreateFlag in the target.
func (s *FlagCopy) CopyToEnv(ctx context.Context, a *core.Actor, sourceEnvID, targetEnvID uuid.UUID, in CopyToEnvInput) (CopyToEnvResult, error) {
	ids, err := copyIDs(in.FlagIDs)
	if err != nil {
		return CopyToEnvResult{}, err
	}
	srcEnv, tgtEnv, err := s.compareEnvs(ctx, a, sourceEnvID, targetEnvID)
	if err != nil {
		return CopyToEnvResult{}, err
	}
	if err := flagstore.MayCreateFlag(a, tgtEnv); err != nil {
		return CopyToEnvResult{}, err
	}
	comment := fmt.Sprintf("Copied from %q", flagstore.ProjectEnv(srcEnv))
	var copied int
	var requested []flagstore.RequestedChange
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		checks, err := s.precheck(ctx, q, a, srcEnv, tgtEnv, ids)
		if err != nil {
			return err
		}
		flags, err := s.flagsByIDs(ctx, q, sourceEnvID, ids)
		if err != nil {
			return err
		}
		verr := &core.ValidationError{}
		for i, c := range checks {
			if !c.KeyCheck {
				verr.Details = append(verr.Details, core.FieldProblem{Path: fmt.Sprintf("flagIds[%d]", i), Code: "key_is_used",
					Message: fmt.Sprintf("a flag with key %s already exists in %s", c.Key, flagstore.ProjectEnv(tgtEnv))})
			}
		}
		if len(verr.Details) > 0 {
			verr.Codes = []string{"key_is_used"}
			return verr
		}
		for i, id := range ids {
			src := flags[id]
			if err := mayCopyFlagTo(a, srcEnv, tgtEnv, src); err != nil {
				return err
			}
			f := src.Clone()
			f.ID, f.EnvID, f.Revision, f.CreatorID, f.UpdatorID = uuid.New(), targetEnvID, uuid.New(), core.ActorID(a), core.ActorID(a)
			f.IsArchived, f.TargetUsers = false, []flagstore.TargetUser{}
			if !checks[i].TargetRuleCheck {
				f.Rules = []flagstore.FlagRule{}
			} else if len(checks[i].NewProperties) > 0 {
				if err := q.AddEndUserPropertyNames(ctx, db.AddEndUserPropertyNamesParams{EnvID: targetEnvID,
					Names: checks[i].NewProperties, MaxProperties: core.MaxEndUserProperties}); err != nil {
					return core.Translate(err)
				}
			}
			var v core.Validator
			refs := flagstore.CheckFlag(&v, &f)
			if err := v.Err(); err != nil {
				return err
			}
			_, cr, err := s.flags.InsertFlag(ctx, q, a, tgtEnv, f, refs, comment, in.NewFlagRequest)
			if err != nil {
				return err
			}
			if cr != nil {
				requested = append(requested, *cr)
			}
			copied++
		}
		return nil
	})
	if err != nil {
		return CopyToEnvResult{}, err
	}
	return CopyToEnvResult{CopiedCount: copied, PendingApproval: requested}, nil
}
