package flagstore

import "github.com/bunting-flags/bunting/sql/targeting"

// Serving is what a flag's targeting hands out when on, as the flag list
// shows it: the values served to individual targets, and each rule's and the
// default rule's values with their shares of users.
type Serving struct {
	Targets []string
	Rules   []RuleServing
	Default []Share
}

// RuleServing is what one rule serves.
type RuleServing struct {
	Name   string
	Shares []Share
}

// Share is a variation's value and the percentage of users a rule serves it
// to, to a hundredth (targeting.BasisPoints), the finest an editor writes.
type Share struct {
	Value   string
	Percent float64
}

// ServingOf reads a flag's Serving; variations no rule gives a share to are
// left out.
func ServingOf(f Flag) Serving {
	values := make(map[string]string, len(f.Variations))
	for _, v := range f.Variations {
		values[v.ID] = v.Value
	}
	var s Serving
	for _, t := range f.TargetUsers {
		if value, ok := values[t.VariationID]; ok && len(t.KeyIDs) > 0 {
			s.Targets = append(s.Targets, value)
		}
	}
	for _, r := range f.Rules {
		s.Rules = append(s.Rules, RuleServing{Name: r.Name, Shares: shares(r.Variations, values)})
	}
	s.Default = shares(f.Fallthrough.Variations, values)
	return s
}

// shares reads a rollout: each variation holds the range [from, to) of
// users, as fractions.
func shares(rollout []RolloutVariation, values map[string]string) []Share {
	var out []Share
	for _, rv := range rollout {
		value, ok := values[rv.ID]
		if !ok || len(rv.Rollout) != 2 || rv.Rollout[1] <= rv.Rollout[0] {
			continue
		}
		out = append(out, Share{Value: value, Percent: float64(targeting.BasisPoints(rv.Rollout[0], rv.Rollout[1])) / 100})
	}
	return out
}
