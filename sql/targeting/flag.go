package targeting

import (
	"slices"
)

// Variation finds a variation by id; nil when the flag has none such.
func (f *Flag) Variation(id string) *Variation {
	for i := range f.Variations {
		if f.Variations[i].ID == id {
			v := f.Variations[i]
			return &v
		}
	}
	return nil
}

// Serves is what a flag hands out: the variations its targeting can serve
// when on, and the one it serves when off.
type Serves struct {
	EnabledVariations []string `json:"enabledVariations"`
	DisabledVariation string   `json:"disabledVariation"`
}

// Serves lists the values the flag's targeting can serve when on, and the
// value it serves when off, as the flag list shows them.
func (f Flag) Serves() Serves {
	used := map[string]bool{}
	for _, t := range f.TargetUsers {
		if len(t.KeyIDs) > 0 {
			used[t.VariationID] = true
		}
	}
	rollouts := slices.Clone(f.Fallthrough.Variations)
	for _, r := range f.Rules {
		rollouts = append(rollouts, r.Variations...)
	}
	for _, rv := range rollouts {
		if len(rv.Rollout) == 2 && rv.Rollout[1] > rv.Rollout[0] {
			used[rv.ID] = true
		}
	}
	s := Serves{EnabledVariations: []string{}}
	for _, vr := range f.Variations {
		if used[vr.ID] {
			s.EnabledVariations = append(s.EnabledVariations, vr.Value)
		}
		if vr.ID == f.DisabledVariationID {
			s.DisabledVariation = vr.Value
		}
	}
	return s
}

// FlagTargeting is the whole of a flag's targeting: individual targets,
// rules and the default rule, as FeatBit's FlagTargeting.
type FlagTargeting struct {
	TargetUsers []TargetUser `json:"targetUsers"`
	Rules       []FlagRule   `json:"rules"`
	Fallthrough Fallthrough  `json:"fallthrough"`
	// ExptIncludeAllTargets is true when left out, as in FeatBit.
	ExptIncludeAllTargets *bool `json:"exptIncludeAllTargets"`
}

// Targeting is the flag's current targeting, to change a part of and send
// back whole.
func (f Flag) Targeting() FlagTargeting {
	c := f.Clone()
	return FlagTargeting{TargetUsers: c.TargetUsers, Rules: c.Rules, Fallthrough: c.Fallthrough,
		ExptIncludeAllTargets: &c.ExptIncludeAllTargets}
}

// Clone is a deep copy, so edits cannot reach the original through shared
// slices or pointers. It copies field by field rather than through JSON: a
// change copies its flag once, and the JSON round trip was a tenth of a
// write's CPU. TestCloneSharesNothing fails when a new field is not copied.
func (f Flag) Clone() Flag {
	c := f
	c.Variations = slices.Clone(f.Variations)
	c.TargetUsers = cloneEach(f.TargetUsers, func(t TargetUser) TargetUser {
		t.KeyIDs = slices.Clone(t.KeyIDs)
		return t
	})
	c.Rules = cloneEach(f.Rules, func(r FlagRule) FlagRule {
		r.DispatchKey = clonePointer(r.DispatchKey)
		r.Conditions = slices.Clone(r.Conditions)
		r.Variations = cloneRollouts(r.Variations)
		return r
	})
	c.Fallthrough.DispatchKey = clonePointer(f.Fallthrough.DispatchKey)
	c.Fallthrough.Variations = cloneRollouts(f.Fallthrough.Variations)
	c.Tags = slices.Clone(f.Tags)
	return c
}

// Clone is a deep copy, so edits cannot reach the original through shared slices.
func (sg Segment) Clone() Segment {
	c := sg
	c.Scopes = slices.Clone(sg.Scopes)
	c.Included = slices.Clone(sg.Included)
	c.Excluded = slices.Clone(sg.Excluded)
	c.Rules = cloneEach(sg.Rules, func(r SegmentRule) SegmentRule {
		r.Conditions = slices.Clone(r.Conditions)
		return r
	})
	c.Tags = slices.Clone(sg.Tags)
	return c
}

func cloneRollouts(vs []RolloutVariation) []RolloutVariation {
	return cloneEach(vs, func(v RolloutVariation) RolloutVariation {
		v.Rollout = slices.Clone(v.Rollout)
		return v
	})
}

// cloneEach copies a slice and each element with clone, keeping nil nil and
// empty empty, as slices.Clone does.
func cloneEach[T any](s []T, clone func(T) T) []T {
	c := slices.Clone(s)
	for i := range c {
		c[i] = clone(c[i])
	}
	return c
}

func clonePointer[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
