package flagstore

import "github.com/bunting-flags/bunting/sql/targeting"

// The flag and segment types are defined in package targeting, where the
// evaluator and the checks can use them without the database; the store,
// whose operations take and return them, names them too (as package os names
// io/fs's FileInfo).
type (
	Flag             = targeting.Flag
	Segment          = targeting.Segment
	Variation        = targeting.Variation
	TargetUser       = targeting.TargetUser
	Condition        = targeting.Condition
	RolloutVariation = targeting.RolloutVariation
	FlagRule         = targeting.FlagRule
	Fallthrough      = targeting.Fallthrough
	SegmentRule      = targeting.SegmentRule
	FlagTargeting    = targeting.FlagTargeting
	Serves           = targeting.Serves
)

// Operators lists every condition operator, for editors.
func Operators() []string { return targeting.Operators() }
