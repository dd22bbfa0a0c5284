package views

// FlagPart is a part of a flag as the pages name it. The parts are named
// here once, so that a part is called the same on every page.
type FlagPart struct {
	// Label names the part in editors, forms and problems.
	Label string
	// Short names it where room is short: the comparison's columns and rows.
	Short string
	// Field names it in a change's history, member by member.
	Field string
	// Summary names it in the targeting summary.
	Summary string
}

// The parts of a flag.
var (
	PartOnOff      = FlagPart{Label: "On/off", Short: "On/off", Field: "Status", Summary: "On/off"}
	PartVariations = FlagPart{Label: "Variations", Short: "Variations", Field: "Variations", Summary: "Variations"}
	PartTargets    = FlagPart{Label: "Individual targets", Short: "Targets", Field: "Individual targets", Summary: "Individual targets"}
	PartRules      = FlagPart{Label: "Rules", Short: "Rules", Field: "Rules", Summary: "Rules"}
	PartDefault    = FlagPart{Label: "Default rule", Short: "Default rule", Field: "Default rule", Summary: "Default rule"}
	PartOff        = FlagPart{Label: "Off variation", Short: "Off variation", Field: "Off variation", Summary: "When off"}
)

// ComparedParts are the parts a comparison of environments shows, in order.
var ComparedParts = []FlagPart{PartOnOff, PartVariations, PartTargets, PartRules, PartDefault, PartOff}
