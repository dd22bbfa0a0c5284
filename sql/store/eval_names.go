package store

import "github.com/bunting-flags/bunting/sql/eval"

// The names below moved to package eval; they stay here only until the
// callers name eval directly (a scripted rename), so that parallel changes
// keep compiling. Do not add to this file.

type (
	EndUser       = eval.EndUser
	UserProperty  = eval.UserProperty
	Evaluation    = eval.Evaluation
	SegmentLookup = eval.SegmentLookup
)

var (
	Evaluate   = eval.Evaluate
	SegmentMap = eval.SegmentMap
	Bucket     = eval.Bucket
	InRollout  = eval.InRollout
)

const (
	MatchArchived    = eval.MatchArchived
	MatchDisabled    = eval.MatchDisabled
	MatchTargeted    = eval.MatchTargeted
	MatchRule        = eval.MatchRule
	MatchFallthrough = eval.MatchFallthrough
)
