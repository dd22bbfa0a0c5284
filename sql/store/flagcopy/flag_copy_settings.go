package flagcopy

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// Copying a flag's settings to its namesake in another environment
// (FeatBit's copy-settings-to).

// Copy modes of individual targets and rules: FeatBit's CopyModes.
const (
	CopyOverwrite = "overwrite"
	CopyAppend    = "append"
)

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
		return "", core.Invalid("options_is_required")
	}
	var v core.Validator
	for _, opt := range []struct {
		field string
		o     CopyOption
	}{{"options.individualTargeting.mode", o.IndividualTargeting}, {"options.targetingRule.mode", o.TargetingRule}} {
		if opt.o.Copy && opt.o.Mode != CopyOverwrite && opt.o.Mode != CopyAppend {
			v.At("options", "invalid", opt.field, `mode is "overwrite" or "append"`)
		}
	}
	if err := v.Err(); err != nil {
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
	v.At("options", "required", "options", "choose at least one setting to copy")
	return "", v.Err()
}

// CopySettingsPlan is what copying settings would do to the target flag.
type CopySettingsPlan struct {
	Before, After flagstore.Flag
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
func (s *FlagCopy) copySettingsFlags(ctx context.Context, a *core.Actor, sourceEnvID uuid.UUID, key string, targetEnvID uuid.UUID) (srcEnv, tgtEnv core.EnvRow, src, tgt flagstore.Flag, names map[string]string, err error) {
	if srcEnv, tgtEnv, src, names, err = s.copySettingsSource(ctx, a, sourceEnvID, key, targetEnvID); err != nil {
		return
	}
	if tgt, err = s.flags.GetFlag(ctx, a, targetEnvID, key); err != nil {
		return
	}
	err = s.addSegmentNames(ctx, tgtEnv, tgt, names)
	return
}

// PreviewCopyFlagSettings says what copying settings would change in the
// target flag, without changing it.
func (s *FlagCopy) PreviewCopyFlagSettings(ctx context.Context, a *core.Actor, sourceEnvID uuid.UUID, key string, targetEnvID uuid.UUID, in CopyFlagSettingsInput) (CopySettingsPlan, error) {
	if _, err := in.Options.check(); err != nil {
		return CopySettingsPlan{}, err
	}
	srcEnv, tgtEnv, src, tgt, names, err := s.copySettingsFlags(ctx, a, sourceEnvID, key, targetEnvID)
	if err != nil {
		return CopySettingsPlan{}, err
	}
	after := tgt.Clone()
	copySettings(src, &after, names, *in.Options)
	plan := CopySettingsPlan{Before: tgt, After: after, Comment: copySettingsComment(srcEnv), SegmentNames: names}
	plan.Refused = flagstore.RequireFlagActions(a, tgtEnv, flagstore.FlagChangeActions(tgt, after), tgt, after)
	if plan.Refused == nil && tgt.IsArchived {
		plan.Refused = flagstore.ErrFlagIsArchived
	}
	if plan.Refused == nil {
		var v core.Validator
		refs := flagstore.CheckFlag(&v, &after)
		if plan.Refused = v.Err(); plan.Refused == nil {
			plan.Refused = s.flags.CheckSegmentRefs(ctx, s.core.Q, tgtEnv, after.Rules, refs)
		}
	}
	return plan, nil
}

func copySettingsComment(src core.EnvRow) string {
	return fmt.Sprintf("Copy flag settings from %q", flagstore.ProjectEnv(src))
}

// copySettingsSource loads the environments and the source flag of a
// settings copy, and the names of the segments the source uses.
func (s *FlagCopy) copySettingsSource(ctx context.Context, a *core.Actor, sourceEnvID uuid.UUID, key string, targetEnvID uuid.UUID) (core.EnvRow, core.EnvRow, flagstore.Flag, map[string]string, error) {
	srcEnv, tgtEnv, err := s.compareEnvs(ctx, a, sourceEnvID, targetEnvID)
	if err != nil {
		return core.EnvRow{}, core.EnvRow{}, flagstore.Flag{}, nil, err
	}
	src, err := s.flags.GetFlag(ctx, a, sourceEnvID, key)
	if err != nil {
		return core.EnvRow{}, core.EnvRow{}, flagstore.Flag{}, nil, err
	}
	names := map[string]string{}
	if err := s.addSegmentNames(ctx, srcEnv, src, names); err != nil {
		return core.EnvRow{}, core.EnvRow{}, flagstore.Flag{}, nil, err
	}
	return srcEnv, tgtEnv, src, names, nil
}

// addSegmentNames adds the names of the segments f's rules use, as env sees them.
func (s *FlagCopy) addSegmentNames(ctx context.Context, env core.EnvRow, f flagstore.Flag, names map[string]string) error {
	segs, err := s.visibleSegments(ctx, s.core.Q, env, flagSegmentIDs(f))
	for _, sg := range segs {
		names[sg.ID.String()] = sg.Name
	}
	return err
}

// CopyFlagSettings copies the chosen settings of a flag to the flag of the
// same key in the target environment: one change of that flag, checked,
// validated, recorded in its history and sent to SDKs as any other.
func (s *FlagCopy) CopyFlagSettings(ctx context.Context, a *core.Actor, sourceEnvID uuid.UUID, key string, targetEnvID uuid.UUID, in CopyFlagSettingsInput) (flagstore.Flag, error) {
	action, err := in.Options.check()
	if err != nil {
		return flagstore.Flag{}, err
	}
	srcEnv, _, src, _, names, err := s.copySettingsFlags(ctx, a, sourceEnvID, key, targetEnvID)
	if err != nil {
		return flagstore.Flag{}, err
	}
	return s.flags.ChangeFlag(ctx, a, targetEnvID, key, flagstore.Change{Comment: copySettingsComment(srcEnv)}, action, func(f *flagstore.Flag) error {
		copySettings(src, f, names, *in.Options)
		return nil
	})
}

// copySettings applies FeatBit's FlagCopyHelper.CopySettings to target: it
// adds the source's variations the target lacks, then copies the chosen
// settings, mapping variations by value. A setting that already serves the
// same is left as it is, so the history says only what changed.
func copySettings(source flagstore.Flag, target *flagstore.Flag, names map[string]string, o FlagSettingCopyOptions) {
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
	mapServe := func(rv []flagstore.RolloutVariation) []flagstore.RolloutVariation {
		out := make([]flagstore.RolloutVariation, len(rv))
		for i, r := range rv {
			out[i] = flagstore.RolloutVariation{ID: mapID(r.ID), Rollout: slices.Clone(r.Rollout), ExptRollout: r.ExptRollout}
		}
		return out
	}
	diff := DiffFlags(source, *target, names)
	if o.IndividualTargeting.Copy && diff.Overview(uuid.Nil).IndividualTargeting {
		var users []flagstore.TargetUser
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
				users = append(users, flagstore.TargetUser{VariationID: tv.ID, KeyIDs: keys})
			}
		}
		target.TargetUsers = core.OrEmpty(users)
	}
	if o.TargetingRule.Copy && diff.Overview(uuid.Nil).TargetingRule {
		var rules []flagstore.FlagRule
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
		target.Rules = core.OrEmpty(rules)
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
