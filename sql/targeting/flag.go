package targeting

import (
	"encoding/json"
	"fmt"
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
	c, err := f.Clone()
	if err != nil {
		// A Flag holds only what JSON decoded into it, so it encodes again.
		panic(fmt.Sprintf("copy flag %s: %v", f.Key, err))
	}
	return FlagTargeting{TargetUsers: c.TargetUsers, Rules: c.Rules, Fallthrough: c.Fallthrough,
		ExptIncludeAllTargets: &c.ExptIncludeAllTargets}
}

// Clone is a deep copy, so edits cannot reach the original through shared slices.
func (f Flag) Clone() (Flag, error) {
	c, err := deepCopy(f)
	c.CreatedAt, c.UpdatedAt = f.CreatedAt, f.UpdatedAt
	return c, err
}

// deepCopy copies v through its JSON, which shares nothing with v; what JSON
// does not keep of a time (its monotonic reading) the caller restores.
func deepCopy[T any](v T) (T, error) {
	var c T
	b, err := json.Marshal(v)
	if err != nil {
		return c, err
	}
	err = json.Unmarshal(b, &c)
	return c, err
}

// Clone is a deep copy, so edits cannot reach the original through shared slices.
func (sg Segment) Clone() (Segment, error) {
	c, err := deepCopy(sg)
	c.CreatedAt, c.UpdatedAt = sg.CreatedAt, sg.UpdatedAt
	return c, err
}
