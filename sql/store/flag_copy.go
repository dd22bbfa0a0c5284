package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
)

// Comparing and copying flags between two environments of an organization
// (FeatBit's compare-overview, compare-with, copy-to-env-precheck,
// copy-to-env and copy-settings-to). Every one reads the source environment,
// so it needs CanAccessEnv there; what it does in the target is checked as
// the same change made there directly would be.

// MaxCompareTargets bounds the target environments of one overview.
const MaxCompareTargets = 10

// MaxCopyFlags bounds the flags of one copy (and of its pre-check).
const MaxCopyFlags = 100

// Copy modes of individual targets and rules: FeatBit's CopyModes.
const (
	CopyOverwrite = "overwrite"
	CopyAppend    = "append"
)

// CompareFilter is FeatBit's FeatureFlagFilter in a compare-overview body.
type CompareFilter struct {
	Name       string   `json:"name"`
	Tags       []string `json:"tags"`
	IsEnabled  *bool    `json:"isEnabled"`
	IsArchived bool     `json:"isArchived"`
	SortBy     string   `json:"sortBy"`
	PageIndex  int      `json:"pageIndex"`
	PageSize   int      `json:"pageSize"`
}

// CompareOverviewInput is FeatBit's GetCompareFlagOverview body.
type CompareOverviewInput struct {
	TargetEnvIDs []uuid.UUID   `json:"targetEnvIds"`
	Filter       CompareFilter `json:"filter"`
}

// CompareFlagOverview is one flag of the source environment with, per target
// environment that has a live flag of its key, which parts differ. A target
// without the flag has no entry in Diffs.
type CompareFlagOverview struct {
	ID          uuid.UUID          `json:"id"`
	Name        string             `json:"name"`
	Key         string             `json:"key"`
	Description string             `json:"description"`
	Tags        []string           `json:"tags"`
	Diffs       []FlagDiffOverview `json:"diffs"`
}

// compareEnvs loads the source (readable) and a target (readable, and not
// the source) of a comparison or copy.
func (s *Store) compareEnvs(ctx context.Context, a *Actor, sourceID, targetID uuid.UUID) (envRow, envRow, error) {
	if sourceID == targetID {
		return envRow{}, envRow{}, Invalid("targetEnvId_is_invalid")
	}
	src, err := s.readableEnv(ctx, a, sourceID)
	if err != nil {
		return envRow{}, envRow{}, err
	}
	tgt, err := s.readableEnv(ctx, a, targetID)
	return src, tgt, err
}

// CompareOverview pages the source environment's flags and says, for each
// target environment, which parts of each differ.
func (s *Store) CompareOverview(ctx context.Context, a *Actor, sourceEnvID uuid.UUID, in CompareOverviewInput) (Paged[CompareFlagOverview], error) {
	targets := slices.Compact(slices.Clone(in.TargetEnvIDs))
	if len(targets) == 0 || len(targets) > MaxCompareTargets {
		return Paged[CompareFlagOverview]{}, Invalid("targetEnvIds_is_invalid")
	}
	envs := map[uuid.UUID]envRow{}
	var srcEnv envRow
	for _, t := range targets {
		src, tgt, err := s.compareEnvs(ctx, a, sourceEnvID, t)
		if err != nil {
			return Paged[CompareFlagOverview]{}, err
		}
		srcEnv, envs[t] = src, tgt
	}
	if in.Filter.PageSize == 0 {
		in.Filter.PageSize = DefaultPageSize
	}
	list, err := s.ListFlags(ctx, a, sourceEnvID, FlagFilter{Name: in.Filter.Name, Tags: in.Filter.Tags,
		IsEnabled: in.Filter.IsEnabled, IsArchived: in.Filter.IsArchived, SortBy: in.Filter.SortBy,
		Page: Page{Index: in.Filter.PageIndex, Size: in.Filter.PageSize}})
	if err != nil {
		return Paged[CompareFlagOverview]{}, err
	}
	ids := make([]uuid.UUID, len(list.Items))
	keys := make([]string, len(list.Items))
	for i, it := range list.Items {
		ids[i], keys[i] = it.ID, it.Key
	}
	sources, err := s.flagsByIDs(ctx, s.q, sourceEnvID, ids)
	if err != nil {
		return Paged[CompareFlagOverview]{}, err
	}
	rows, err := s.q.LiveFlagsByKeys(ctx, db.LiveFlagsByKeysParams{EnvIds: targets, Keys: keys})
	if err != nil {
		return Paged[CompareFlagOverview]{}, translate(err)
	}
	byEnvKey := map[[2]string]Flag{}
	refs := map[uuid.UUID][]uuid.UUID{} // segments named, by the environment naming them
	for _, r := range rows {
		f, err := flagFrom(r)
		if err != nil {
			return Paged[CompareFlagOverview]{}, err
		}
		byEnvKey[[2]string{f.EnvID.String(), f.Key}] = f
		refs[f.EnvID] = append(refs[f.EnvID], flagSegmentIDs(f)...)
	}
	for _, f := range sources {
		refs[sourceEnvID] = append(refs[sourceEnvID], flagSegmentIDs(f)...)
	}
	// One query per environment names every segment the page's rules use.
	names := map[string]string{}
	for envID, ids := range refs {
		env := srcEnv
		if envID != sourceEnvID {
			env = envs[envID]
		}
		segs, err := s.visibleSegments(ctx, s.q, env, slices.Compact(ids))
		if err != nil {
			return Paged[CompareFlagOverview]{}, err
		}
		for _, sg := range segs {
			names[sg.ID.String()] = sg.Name
		}
	}
	out := Paged[CompareFlagOverview]{TotalCount: list.TotalCount, TotalCountIsEstimate: list.TotalCountIsEstimate, Items: make([]CompareFlagOverview, 0, len(list.Items))}
	for _, it := range list.Items {
		src, ok := sources[it.ID]
		if !ok {
			continue // deleted between the two reads
		}
		o := CompareFlagOverview{ID: it.ID, Name: it.Name, Key: it.Key, Description: it.Description, Tags: it.Tags,
			Diffs: []FlagDiffOverview{}}
		for _, t := range targets {
			tgt, ok := byEnvKey[[2]string{t.String(), it.Key}]
			if !ok {
				continue
			}
			o.Diffs = append(o.Diffs, DiffFlags(src, tgt, names).Overview(t))
		}
		out.Items = append(out.Items, o)
	}
	return out, nil
}

// flagsByIDs reads some flags of an environment by id.
func (s *Store) flagsByIDs(ctx context.Context, q *db.Queries, envID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]Flag, error) {
	rows, err := q.FlagsByIDs(ctx, db.FlagsByIDsParams{EnvID: envID, Ids: ids})
	if err != nil {
		return nil, translate(err)
	}
	out := make(map[uuid.UUID]Flag, len(rows))
	for _, r := range rows {
		f, err := flagFrom(r)
		if err != nil {
			return nil, err
		}
		out[f.ID] = f
	}
	return out, nil
}

// flagSegmentIDs lists the segments a flag's rules name.
func flagSegmentIDs(f Flag) []uuid.UUID {
	var ids []uuid.UUID
	for _, r := range f.Rules {
		for _, c := range r.Conditions {
			if c.Property != SegmentIn && c.Property != SegmentNotIn {
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
func (s *Store) visibleSegments(ctx context.Context, q *db.Queries, env envRow, ids []uuid.UUID) ([]Segment, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := q.SegmentsByIDs(ctx, db.SegmentsByIDsParams{OrganizationID: env.OrganizationID, Ids: ids,
		EnvID: env.Environment.ID, Scopes: envScopes(env)})
	if err != nil {
		return nil, translate(err)
	}
	return segmentsFrom(rows)
}

// relatedSegmentNames names the segments each side's rules use, each as
// seen from its own environment (the source's env is the flag's own).
func (s *Store) relatedSegmentNames(ctx context.Context, target envRow, source, tgt Flag) (map[string]string, error) {
	names := map[string]string{}
	for _, side := range []struct {
		envID uuid.UUID
		flag  Flag
	}{{source.EnvID, source}, {target.Environment.ID, tgt}} {
		ids := flagSegmentIDs(side.flag)
		if len(ids) == 0 {
			continue
		}
		env := target
		if side.envID != target.Environment.ID {
			var err error
			if env, err = s.environmentByID(ctx, target.OrganizationID, side.envID); err != nil {
				return nil, err
			}
		}
		segs, err := s.visibleSegments(ctx, s.q, env, ids)
		if err != nil {
			return nil, err
		}
		for _, sg := range segs {
			names[sg.ID.String()] = sg.Name
		}
	}
	return names, nil
}

// environmentByID loads an environment of an organization, with no check:
// for callers that checked it already.
func (s *Store) environmentByID(ctx context.Context, orgID, envID uuid.UUID) (envRow, error) {
	row, err := s.q.GetEnvironment(ctx, db.GetEnvironmentParams{OrganizationID: orgID, ID: envID})
	return envRow{row}, translate(err)
}

// KeyValue is FeatBit's KeyValuePair<string, string>: a segment's id and name.
type KeyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// CompareFlagDetail is FeatBit's CompareFlagDetail: both flags, their diff,
// the names of the segments their rules use, and whether the source's rules
// can be copied (every segment they use is visible in the target).
type CompareFlagDetail struct {
	Source          Flag       `json:"source"`
	Target          Flag       `json:"target"`
	Diff            FlagDiff   `json:"diff"`
	RelatedSegments []KeyValue `json:"relatedSegments"`
	IsRulesCopyable bool       `json:"isRulesCopyable"`
	// SourceEnv and TargetEnv name the two environments ("Project/Env").
	SourceEnv string `json:"sourceEnv"`
	TargetEnv string `json:"targetEnv"`
}

// SegmentNames looks up the related segments' names by id.
func (d CompareFlagDetail) SegmentNames() map[string]string {
	m := make(map[string]string, len(d.RelatedSegments))
	for _, kv := range d.RelatedSegments {
		m[kv.Key] = kv.Value
	}
	return m
}

// projectEnv names an environment as FeatBit's history does: "Project/Env".
func projectEnv(env envRow) string { return env.ProjectName + "/" + env.Environment.Name }

// ErrNotInTarget: the target environment has no flag of the compared key.
var ErrNotInTarget = fmt.Errorf("%w: no flag of this key in the target environment", ErrNotFound)

// CompareFlag compares a flag with the flag of the same key in the target
// environment; ErrNotInTarget when the target has none.
func (s *Store) CompareFlag(ctx context.Context, a *Actor, sourceEnvID uuid.UUID, key string, targetEnvID uuid.UUID) (*CompareFlagDetail, error) {
	srcEnv, tgtEnv, err := s.compareEnvs(ctx, a, sourceEnvID, targetEnvID)
	if err != nil {
		return nil, err
	}
	src, err := s.GetFlag(ctx, a, sourceEnvID, key)
	if err != nil {
		return nil, err
	}
	row, err := s.q.GetFlag(ctx, db.GetFlagParams{EnvID: targetEnvID, Key: key})
	if err = translate(err); err == ErrNotFound {
		return nil, ErrNotInTarget
	} else if err != nil {
		return nil, err
	}
	tgt, err := flagFrom(row)
	if err != nil {
		return nil, err
	}
	names, err := s.relatedSegmentNames(ctx, tgtEnv, src, tgt)
	if err != nil {
		return nil, err
	}
	missing, err := s.segmentsNotVisible(ctx, s.q, tgtEnv, src)
	if err != nil {
		return nil, err
	}
	d := &CompareFlagDetail{Source: src, Target: tgt, Diff: DiffFlags(src, tgt, names), RelatedSegments: []KeyValue{},
		IsRulesCopyable: len(missing) == 0, SourceEnv: projectEnv(srcEnv), TargetEnv: projectEnv(tgtEnv)}
	for id, name := range names {
		d.RelatedSegments = append(d.RelatedSegments, KeyValue{id, name})
	}
	slices.SortFunc(d.RelatedSegments, func(x, y KeyValue) int { return strings.Compare(x.Key, y.Key) })
	return d, nil
}

// NamedSegment names a segment a flag uses.
type NamedSegment struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// segmentsNotVisible lists the segments f's rules use that target cannot
// use: not visible there (an environment-specific segment of another
// environment, a shared one whose scopes leave it out) or archived.
func (s *Store) segmentsNotVisible(ctx context.Context, q *db.Queries, target envRow, f Flag) ([]NamedSegment, error) {
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
func (s *Store) segmentName(ctx context.Context, q *db.Queries, orgID, id uuid.UUID) string {
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
		return nil, Invalid("flagIds_is_invalid")
	}
	return out, nil
}

// CopyToEnvPrecheck says, for each flag, what copying it to the target
// environment would run into. Every id must be a flag of the source.
func (s *Store) CopyToEnvPrecheck(ctx context.Context, a *Actor, sourceEnvID, targetEnvID uuid.UUID, flagIDs []uuid.UUID) ([]CopyToEnvPrecheckResult, error) {
	ids, err := copyIDs(flagIDs)
	if err != nil {
		return nil, err
	}
	_, tgtEnv, err := s.compareEnvs(ctx, a, sourceEnvID, targetEnvID)
	if err != nil {
		return nil, err
	}
	return s.precheck(ctx, s.q, a, sourceEnvID, tgtEnv, ids)
}

func (s *Store) precheck(ctx context.Context, q *db.Queries, a *Actor, sourceEnvID uuid.UUID, tgtEnv envRow, ids []uuid.UUID) ([]CopyToEnvPrecheckResult, error) {
	flags, err := s.flagsByIDs(ctx, q, sourceEnvID, ids)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(flags))
	for _, id := range ids {
		f, ok := flags[id]
		if !ok {
			return nil, ErrNotFound
		}
		keys = append(keys, strings.ToLower(f.Key))
	}
	taken, err := q.FlagKeysUsed(ctx, db.FlagKeysUsedParams{EnvID: tgtEnv.Environment.ID, Keys: keys})
	if err != nil {
		return nil, translate(err)
	}
	known, err := q.EndUserPropertyNames(ctx, db.EndUserPropertyNamesParams{EnvID: tgtEnv.Environment.ID, Lim: maxEndUserProperties})
	if err != nil {
		return nil, translate(err)
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
			PermissionCheck: a.require(access.CreateFlag, flagRN(tgtEnv, f.Key, f.Tags)) == nil,
			NewProperties:   newProperties(f.Rules, known), SegmentsNotVisible: OrEmpty(missing)}
		r.Passed = r.KeyCheck && r.TargetUserCheck && r.TargetRuleCheck && r.PermissionCheck
		out[i] = r
	}
	return out, nil
}

// newProperties names the user properties the rules test that the target
// environment has not seen (FeatBit's GetNewProperties): a copy adds them
// there, so its rule editors suggest them.
func newProperties(rules []FlagRule, known []string) []string {
	out := []string{}
	for _, r := range rules {
		for _, c := range r.Conditions {
			if c.Property == SegmentIn || c.Property == SegmentNotIn || c.Property == "keyId" || c.Property == "name" {
				continue
			}
			if !slices.Contains(known, c.Property) && !slices.Contains(out, c.Property) {
				out = append(out, c.Property)
			}
		}
	}
	return out
}

func hasTargets(f Flag) bool {
	return slices.ContainsFunc(f.TargetUsers, func(t TargetUser) bool { return len(t.KeyIDs) > 0 })
}

// CopyToEnvInput is FeatBit's CopyToEnv body. PrecheckResults are accepted
// for FeatBit's clients and ignored: the server checks again, inside the copy.
type CopyToEnvInput struct {
	FlagIDs         []uuid.UUID       `json:"flagIds"`
	PrecheckResults []json.RawMessage `json:"precheckResults"`
}

// CopyToEnvResult is FeatBit's CopyToEnvResult.
type CopyToEnvResult struct {
	CopiedCount int `json:"copiedCount"`
}

// CopyToEnv copies flags to another environment as new flags of the same
// key: all of them with their history entries, or none. As FeatBit copies,
// a copy has no individual targets, and no rules when its rules use a
// segment the target cannot; a key taken in the target refuses the whole
// copy, naming each such flag. Each copy needs CreateFlag in the target.
func (s *Store) CopyToEnv(ctx context.Context, a *Actor, sourceEnvID, targetEnvID uuid.UUID, in CopyToEnvInput) (CopyToEnvResult, error) {
	ids, err := copyIDs(in.FlagIDs)
	if err != nil {
		return CopyToEnvResult{}, err
	}
	srcEnv, tgtEnv, err := s.compareEnvs(ctx, a, sourceEnvID, targetEnvID)
	if err != nil {
		return CopyToEnvResult{}, err
	}
	if err := mayCreateFlag(a, tgtEnv); err != nil {
		return CopyToEnvResult{}, err
	}
	comment := fmt.Sprintf("Copied from %q", projectEnv(srcEnv))
	var copied int
	err = s.inTx(ctx, func(q *db.Queries) error {
		checks, err := s.precheck(ctx, q, a, sourceEnvID, tgtEnv, ids)
		if err != nil {
			return err
		}
		flags, err := s.flagsByIDs(ctx, q, sourceEnvID, ids)
		if err != nil {
			return err
		}
		verr := &ValidationError{}
		for i, c := range checks {
			if !c.KeyCheck {
				verr.Details = append(verr.Details, FieldProblem{Path: fmt.Sprintf("flagIds[%d]", i), Code: "key_is_used",
					Message: fmt.Sprintf("a flag with key %s already exists in %s", c.Key, projectEnv(tgtEnv))})
			}
		}
		if len(verr.Details) > 0 {
			verr.Codes = []string{"key_is_used"}
			return verr
		}
		for i, id := range ids {
			src := flags[id]
			if err := a.require(access.CreateFlag, flagRN(tgtEnv, src.Key, src.Tags)); err != nil {
				return err
			}
			f, err := src.Clone()
			if err != nil {
				return err
			}
			f.ID, f.EnvID, f.Revision, f.CreatorID, f.UpdatorID = uuid.New(), targetEnvID, uuid.New(), actorID(a), actorID(a)
			f.IsArchived, f.TargetUsers = false, []TargetUser{}
			if !checks[i].TargetRuleCheck {
				f.Rules = []FlagRule{}
			} else if len(checks[i].NewProperties) > 0 {
				if err := q.AddEndUserPropertyNames(ctx, db.AddEndUserPropertyNamesParams{EnvID: targetEnvID,
					Names: checks[i].NewProperties, MaxProperties: maxEndUserProperties}); err != nil {
					return translate(err)
				}
			}
			var v validator
			refs := checkFlag(&v, &f)
			if err := v.err(); err != nil {
				return err
			}
			if _, err := s.insertFlag(ctx, q, a, tgtEnv, f, refs, comment); err != nil {
				return err
			}
			copied++
		}
		return nil
	})
	if err != nil {
		return CopyToEnvResult{}, err
	}
	return CopyToEnvResult{CopiedCount: copied}, nil
}

// CopyOption chooses whether, and how, to copy individual targets or rules.
type CopyOption struct {
	Copy bool   `json:"copy"`
	Mode string `json:"mode"`
}

// FlagSettingCopyOptions is FeatBit's FlagSettingCopyOptions: which settings
// of a flag to copy. Variations the target lacks (by value) are always
// added, as the copied settings may serve them.
type FlagSettingCopyOptions struct {
	OnOffState          bool       `json:"onOffState"`
	IndividualTargeting CopyOption `json:"individualTargeting"`
	TargetingRule       CopyOption `json:"targetingRule"`
	DefaultRule         bool       `json:"defaultRule"`
	OffVariation        bool       `json:"offVariation"`
}

// CopyFlagSettingsInput is FeatBit's CopyFlagSettings body.
type CopyFlagSettingsInput struct {
	Options *FlagSettingCopyOptions `json:"options"`
}

// check refuses options that choose nothing or name an unknown mode, and
// names the action a copy that changes nothing is checked with.
func (o *FlagSettingCopyOptions) check() (access.Action, error) {
	if o == nil {
		return "", Invalid("options_is_required")
	}
	var v validator
	for _, opt := range []struct {
		field string
		o     CopyOption
	}{{"options.individualTargeting.mode", o.IndividualTargeting}, {"options.targetingRule.mode", o.TargetingRule}} {
		if opt.o.Copy && opt.o.Mode != CopyOverwrite && opt.o.Mode != CopyAppend {
			v.at("options", "invalid", opt.field, `mode is "overwrite" or "append"`)
		}
	}
	if err := v.err(); err != nil {
		return "", err
	}
	switch {
	case o.OnOffState:
		return access.ToggleFlag, nil
	case o.IndividualTargeting.Copy:
		return access.UpdateFlagIndividualTargeting, nil
	case o.TargetingRule.Copy:
		return access.UpdateFlagTargetingRules, nil
	case o.DefaultRule:
		return access.UpdateFlagDefaultRule, nil
	case o.OffVariation:
		return access.UpdateFlagOffVariation, nil
	}
	v.at("options", "required", "options", "choose at least one setting to copy")
	return "", v.err()
}

// CopySettingsPlan is what copying settings would do to the target flag.
type CopySettingsPlan struct {
	Before, After Flag
	// Comment is the target's history entry's comment.
	Comment string
	// SegmentNames names the segments either flag's rules use, by id.
	SegmentNames map[string]string
	// Refused is why the caller may not make this change (nil when they may).
	Refused error
}

// copySettingsFlags loads both sides of a settings copy: the environments,
// the source flag, the target's flag of the same key, and the names of the
// segments either side's rules use.
func (s *Store) copySettingsFlags(ctx context.Context, a *Actor, sourceEnvID uuid.UUID, key string, targetEnvID uuid.UUID) (srcEnv, tgtEnv envRow, src, tgt Flag, names map[string]string, err error) {
	if srcEnv, tgtEnv, src, names, err = s.copySettingsSource(ctx, a, sourceEnvID, key, targetEnvID); err != nil {
		return
	}
	if tgt, err = s.GetFlag(ctx, a, targetEnvID, key); err != nil {
		return
	}
	err = s.addSegmentNames(ctx, tgtEnv, tgt, names)
	return
}

// PreviewCopyFlagSettings says what copying settings would change in the
// target flag, without changing it.
func (s *Store) PreviewCopyFlagSettings(ctx context.Context, a *Actor, sourceEnvID uuid.UUID, key string, targetEnvID uuid.UUID, in CopyFlagSettingsInput) (CopySettingsPlan, error) {
	if _, err := in.Options.check(); err != nil {
		return CopySettingsPlan{}, err
	}
	srcEnv, tgtEnv, src, tgt, names, err := s.copySettingsFlags(ctx, a, sourceEnvID, key, targetEnvID)
	if err != nil {
		return CopySettingsPlan{}, err
	}
	after, err := tgt.Clone()
	if err != nil {
		return CopySettingsPlan{}, err
	}
	copySettings(src, &after, names, *in.Options)
	plan := CopySettingsPlan{Before: tgt, After: after, Comment: copySettingsComment(srcEnv), SegmentNames: names}
	plan.Refused = requireFlagActions(a, tgtEnv, flagChangeActions(tgt, after), tgt, after)
	if plan.Refused == nil && tgt.IsArchived {
		plan.Refused = ErrFlagIsArchived
	}
	if plan.Refused == nil {
		var v validator
		refs := checkFlag(&v, &after)
		if plan.Refused = v.err(); plan.Refused == nil {
			plan.Refused = s.checkSegmentRefs(ctx, s.q, tgtEnv, after.Rules, refs)
		}
	}
	return plan, nil
}

func copySettingsComment(src envRow) string {
	return fmt.Sprintf("Copy flag settings from %q", projectEnv(src))
}

// copySettingsSource loads the environments and the source flag of a
// settings copy, and the names of the segments the source uses.
func (s *Store) copySettingsSource(ctx context.Context, a *Actor, sourceEnvID uuid.UUID, key string, targetEnvID uuid.UUID) (envRow, envRow, Flag, map[string]string, error) {
	srcEnv, tgtEnv, err := s.compareEnvs(ctx, a, sourceEnvID, targetEnvID)
	if err != nil {
		return envRow{}, envRow{}, Flag{}, nil, err
	}
	src, err := s.GetFlag(ctx, a, sourceEnvID, key)
	if err != nil {
		return envRow{}, envRow{}, Flag{}, nil, err
	}
	names := map[string]string{}
	if err := s.addSegmentNames(ctx, srcEnv, src, names); err != nil {
		return envRow{}, envRow{}, Flag{}, nil, err
	}
	return srcEnv, tgtEnv, src, names, nil
}

// addSegmentNames adds the names of the segments f's rules use, as env sees them.
func (s *Store) addSegmentNames(ctx context.Context, env envRow, f Flag, names map[string]string) error {
	segs, err := s.visibleSegments(ctx, s.q, env, flagSegmentIDs(f))
	for _, sg := range segs {
		names[sg.ID.String()] = sg.Name
	}
	return err
}

// CopyFlagSettings copies the chosen settings of a flag to the flag of the
// same key in the target environment: one change of that flag, checked,
// validated, recorded in its history and sent to SDKs as any other.
func (s *Store) CopyFlagSettings(ctx context.Context, a *Actor, sourceEnvID uuid.UUID, key string, targetEnvID uuid.UUID, in CopyFlagSettingsInput) (Flag, error) {
	action, err := in.Options.check()
	if err != nil {
		return Flag{}, err
	}
	srcEnv, _, src, _, names, err := s.copySettingsFlags(ctx, a, sourceEnvID, key, targetEnvID)
	if err != nil {
		return Flag{}, err
	}
	return s.changeFlag(ctx, a, targetEnvID, key, Change{Comment: copySettingsComment(srcEnv)}, action, func(f *Flag) error {
		copySettings(src, f, names, *in.Options)
		return nil
	})
}

// copySettings applies FeatBit's FlagCopyHelper.CopySettings to target: it
// adds the source's variations the target lacks, then copies the chosen
// settings, mapping variations by value. A setting that already serves the
// same is left as it is, so the history says only what changed.
func copySettings(source Flag, target *Flag, names map[string]string, o FlagSettingCopyOptions) {
	if o.OnOffState {
		target.IsEnabled = source.IsEnabled
	}
	for _, sv := range source.Variations {
		if variationByValue(target.Variations, sv.Value) != nil {
			continue
		}
		if variationByID(target.Variations, sv.ID) != nil {
			sv.ID = uuid.NewString()
		}
		target.Variations = append(target.Variations, sv)
	}
	mapID := func(sourceID string) string {
		if v := variationByID(source.Variations, sourceID); v != nil {
			if t := variationByValue(target.Variations, v.Value); t != nil {
				return t.ID
			}
		}
		return sourceID
	}
	mapServe := func(rv []RolloutVariation) []RolloutVariation {
		out := make([]RolloutVariation, len(rv))
		for i, r := range rv {
			out[i] = RolloutVariation{ID: mapID(r.ID), Rollout: slices.Clone(r.Rollout), ExptRollout: r.ExptRollout}
		}
		return out
	}
	diff := DiffFlags(source, *target, names)
	if o.IndividualTargeting.Copy && diff.Overview(uuid.Nil).IndividualTargeting {
		var users []TargetUser
		for _, tv := range target.Variations {
			var keys []string
			if sv := variationByValue(source.Variations, tv.Value); sv != nil {
				keys = usersOf(source, sv.ID)
			}
			if o.IndividualTargeting.Mode == CopyAppend {
				keys = append(usersOf(*target, tv.ID), keys...)
			}
			keys = slices.Compact(dedupe(keys))
			if len(keys) > 0 {
				users = append(users, TargetUser{VariationID: tv.ID, KeyIDs: keys})
			}
		}
		target.TargetUsers = OrEmpty(users)
	}
	if o.TargetingRule.Copy && diff.Overview(uuid.Nil).TargetingRule {
		var rules []FlagRule
		if o.TargetingRule.Mode == CopyAppend {
			rules = append(rules, target.Rules...)
		}
		for _, d := range diff.TargetingRule {
			if d.Source == nil || (o.TargetingRule.Mode == CopyAppend && !d.IsDifferent) {
				continue
			}
			r := *d.Source
			r.ID, r.Variations = uuid.NewString(), mapServe(r.Variations)
			r.Conditions = slices.Clone(r.Conditions)
			rules = append(rules, r)
		}
		target.Rules = OrEmpty(rules)
	}
	if o.DefaultRule && diff.DefaultRule.IsDifferent {
		ft := source.Fallthrough
		ft.Variations = mapServe(ft.Variations)
		target.Fallthrough = ft
	}
	if o.OffVariation && diff.OffVariation.IsDifferent {
		target.DisabledVariationID = mapID(source.DisabledVariationID)
	}
}

// dedupe keeps the first of each string, in order.
func dedupe(xs []string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
