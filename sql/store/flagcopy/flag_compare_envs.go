package flagcopy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// Comparing flags between two environments (flag_copy.go says what every
// comparison and copy needs): the overview of a page of flags against
// several targets, and one flag against its namesake in another
// environment. What differs is flag_compare.go's to say.

// MaxCompareTargets bounds the target environments of one overview.
const MaxCompareTargets = 10

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

// CompareOverview pages the source environment's flags and says, for each
// target environment, which parts of each differ.
func (s *FlagCopy) CompareOverview(ctx context.Context, a *core.Actor, sourceEnvID uuid.UUID, in CompareOverviewInput) (core.Paged[CompareFlagOverview], error) {
	targets := slices.Compact(slices.Clone(in.TargetEnvIDs))
	if len(targets) == 0 || len(targets) > MaxCompareTargets {
		return core.Paged[CompareFlagOverview]{}, core.Invalid("targetEnvIds_is_invalid")
	}
	envs := map[uuid.UUID]core.EnvRow{}
	var srcEnv core.EnvRow
	for _, t := range targets {
		src, tgt, err := s.compareEnvs(ctx, a, sourceEnvID, t)
		if err != nil {
			return core.Paged[CompareFlagOverview]{}, err
		}
		srcEnv, envs[t] = src, tgt
	}
	if in.Filter.PageSize == 0 {
		in.Filter.PageSize = core.DefaultPageSize
	}
	list, err := s.flags.ListFlags(ctx, a, sourceEnvID, flagstore.FlagFilter{Name: in.Filter.Name, Tags: in.Filter.Tags,
		IsEnabled: in.Filter.IsEnabled, IsArchived: in.Filter.IsArchived, SortBy: in.Filter.SortBy,
		Page: core.Page{Index: in.Filter.PageIndex, Size: in.Filter.PageSize}})
	if err != nil {
		return core.Paged[CompareFlagOverview]{}, err
	}
	ids := make([]uuid.UUID, len(list.Items))
	keys := make([]string, len(list.Items))
	for i, it := range list.Items {
		ids[i], keys[i] = it.ID, it.Key
	}
	sources, err := s.flagsByIDs(ctx, s.core.Q, sourceEnvID, ids)
	if err != nil {
		return core.Paged[CompareFlagOverview]{}, err
	}
	rows, err := s.core.Q.LiveFlagsByKeys(ctx, db.LiveFlagsByKeysParams{EnvIds: targets, Keys: keys})
	if err != nil {
		return core.Paged[CompareFlagOverview]{}, core.Translate(err)
	}
	byEnvKey := map[[2]string]flagstore.Flag{}
	refs := map[uuid.UUID][]uuid.UUID{} // segments named, by the environment naming them
	for _, r := range rows {
		f, err := flagstore.FlagFrom(r)
		if err != nil {
			return core.Paged[CompareFlagOverview]{}, err
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
		segs, err := s.visibleSegments(ctx, s.core.Q, env, slices.Compact(ids))
		if err != nil {
			return core.Paged[CompareFlagOverview]{}, err
		}
		for _, sg := range segs {
			names[sg.ID.String()] = sg.Name
		}
	}
	out := core.Paged[CompareFlagOverview]{TotalCount: list.TotalCount, TotalCountIsEstimate: list.TotalCountIsEstimate, Items: make([]CompareFlagOverview, 0, len(list.Items))}
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

// relatedSegmentNames names the segments each side's rules use, each as
// seen from its own environment (the source's env is the flag's own).
func (s *FlagCopy) relatedSegmentNames(ctx context.Context, target core.EnvRow, source, tgt flagstore.Flag) (map[string]string, error) {
	names := map[string]string{}
	for _, side := range []struct {
		envID uuid.UUID
		flag  flagstore.Flag
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
		segs, err := s.visibleSegments(ctx, s.core.Q, env, ids)
		if err != nil {
			return nil, err
		}
		for _, sg := range segs {
			names[sg.ID.String()] = sg.Name
		}
	}
	return names, nil
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
	Source          flagstore.Flag `json:"source"`
	Target          flagstore.Flag `json:"target"`
	Diff            FlagDiff       `json:"diff"`
	RelatedSegments []KeyValue     `json:"relatedSegments"`
	IsRulesCopyable bool           `json:"isRulesCopyable"`
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

// ErrNotInTarget: the target environment has no flag of the compared key.
var ErrNotInTarget = fmt.Errorf("%w: no flag of this key in the target environment", core.ErrNotFound)

// CompareFlag compares a flag with the flag of the same key in the target
// environment; ErrNotInTarget when the target has none.
func (s *FlagCopy) CompareFlag(ctx context.Context, a *core.Actor, sourceEnvID uuid.UUID, key string, targetEnvID uuid.UUID) (*CompareFlagDetail, error) {
	srcEnv, tgtEnv, err := s.compareEnvs(ctx, a, sourceEnvID, targetEnvID)
	if err != nil {
		return nil, err
	}
	src, err := s.flags.GetFlag(ctx, a, sourceEnvID, key)
	if err != nil {
		return nil, err
	}
	row, err := s.core.Q.GetFlag(ctx, db.GetFlagParams{EnvID: targetEnvID, Key: key})
	if err = core.Translate(err); err == core.ErrNotFound {
		return nil, ErrNotInTarget
	} else if err != nil {
		return nil, err
	}
	tgt, err := flagstore.FlagFrom(row)
	if err != nil {
		return nil, err
	}
	names, err := s.relatedSegmentNames(ctx, tgtEnv, src, tgt)
	if err != nil {
		return nil, err
	}
	missing, err := s.segmentsNotVisible(ctx, s.core.Q, tgtEnv, src)
	if err != nil {
		return nil, err
	}
	d := &CompareFlagDetail{Source: src, Target: tgt, Diff: DiffFlags(src, tgt, names), RelatedSegments: []KeyValue{},
		IsRulesCopyable: len(missing) == 0, SourceEnv: flagstore.ProjectEnv(srcEnv), TargetEnv: flagstore.ProjectEnv(tgtEnv)}
	for id, name := range names {
		d.RelatedSegments = append(d.RelatedSegments, KeyValue{id, name})
	}
	slices.SortFunc(d.RelatedSegments, func(x, y KeyValue) int { return strings.Compare(x.Key, y.Key) })
	return d, nil
}
