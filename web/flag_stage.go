package web

import (
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/views"
)

// stageWords name each lifecycle stage as the pages show it, and say what
// puts a flag there (flagstore.StageOf holds the rule).
var stageWords = map[flagstore.Stage]struct{ label, means, class string }{
	flagstore.StageNew:        {"New", "Created in the last 7 days, or not evaluated by an SDK yet, and not split between variations.", "badge-blue"},
	flagstore.StageRollingOut: {"Rolling out", "Serves more than one variation, or changed in the last 7 days.", "badge-amber"},
	flagstore.StageLaunched:   {"Launched", "Has served one variation to everyone, unchanged, for 7 days or more.", "badge-green"},
	flagstore.StageUnused:     {"Unused", "No SDK has evaluated it for 30 days or more.", "badge-gray"},
	flagstore.StageArchived:   {"Archived", "Archived: SDKs no longer receive it.", "badge-gray"},
}

// stageView shows a flag's stage; nil when it is not known (a row just
// toggled, which the list reads again on its next load).
func stageView(stage flagstore.Stage, ready bool) *views.FlagStage {
	w, ok := stageWords[stage]
	if !ok {
		return nil
	}
	return &views.FlagStage{Stage: string(stage), Label: w.label, Means: w.means, Class: w.class, ReadyToRemove: ready}
}

// stageOptions are the list's stage filter: any, each stage of active
// flags, and those ready to remove.
func stageOptions(chosen string) []views.Option {
	out := []views.Option{{Value: "", Label: "Any stage", Selected: chosen == ""}}
	for _, s := range flagstore.Stages {
		if s == flagstore.StageArchived {
			continue // the Archived view lists them
		}
		out = append(out, views.Option{Value: string(s), Label: stageWords[s].label, Selected: chosen == string(s)})
	}
	return append(out, views.Option{Value: flagstore.ReadyToRemoveFilter, Label: "Ready to remove",
		Selected: chosen == flagstore.ReadyToRemoveFilter})
}

// knownStage is whether a list's address names a stage filter the list
// offers; others are ignored, as unknown orders are.
func knownStage(s string) bool {
	if s == flagstore.ReadyToRemoveFilter {
		return true
	}
	_, ok := stageWords[flagstore.Stage(s)]
	return ok && s != string(flagstore.StageArchived)
}
