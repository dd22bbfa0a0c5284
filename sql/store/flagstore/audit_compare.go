package flagstore

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/instructions"
	"github.com/bunting-flags/bunting/sql/jsonbody"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// CompareInput is FeatBit's Compare request: a flag or a segment before and
// after a change, each as JSON text, as FeatBit's Save dialog sends them
// (JSON.stringify of the flag or segment it holds).
type CompareInput struct {
	RefType    string        `json:"refType"`
	DataChange *CompareTexts `json:"dataChange"`
}

// CompareTexts is FeatBit's DataChange in a request: two strings of JSON.
type CompareTexts struct {
	Previous string `json:"previous"`
	Current  string `json:"current"`
}

// AuthorizeAuditCompare checks what comparing a change in an environment
// requires before its body is read: reading the environment, as FeatBit's
// audit-log routes require.
func (s *Flags) AuthorizeAuditCompare(ctx context.Context, a *core.Actor, envID uuid.UUID) error {
	_, err := s.core.ReadableEnv(ctx, a, envID)
	return err
}

// CompareChange answers FeatBit's POST audit-logs/compare: the instructions
// that turn previous into current (sql/instructions, the comparer the
// audit-log list uses too). It reads nothing but the environment, which the
// caller must be able to read. FeatBit's UI enables Save only when the list
// is not empty.
//
// refType is FeatureFlag or Segment (refType_is_required,
// refType_is_invalid); dataChange and both texts are required
// (dataChange_is_required, dataChange.previous_is_required …); a text that
// is not a flag (or segment) as JSON, or is the other kind, is
// dataChange.previous_is_invalid or dataChange.current_is_invalid, with
// why in the problem's message.
func (s *Flags) CompareChange(ctx context.Context, a *core.Actor, envID uuid.UUID, in CompareInput) ([]instructions.Instruction, error) {
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return nil, err
	}
	switch {
	case in.RefType == "":
		return nil, core.Invalid("refType_is_required")
	case in.RefType != instructions.RefFlag && in.RefType != instructions.RefSegment:
		return nil, core.Invalid("refType_is_invalid")
	case in.DataChange == nil:
		return nil, core.Invalid("dataChange_is_required")
	}
	var problems []core.FieldProblem
	texts := []struct{ field, text string }{{"dataChange.previous", in.DataChange.Previous}, {"dataChange.current", in.DataChange.Current}}
	var flags [2]instructions.Flag
	var segments [2]instructions.Segment
	for i, t := range texts {
		if t.text == "" {
			problems = append(problems, core.FieldProblem{Path: t.field, Code: t.field + "_is_required"})
			continue
		}
		var err error
		if in.RefType == instructions.RefFlag {
			flags[i], err = instructions.DecodeFlag([]byte(t.text))
		} else {
			segments[i], err = instructions.DecodeSegment([]byte(t.text))
		}
		if err != nil {
			problems = append(problems, core.FieldProblem{Path: t.field, Code: t.field + "_is_invalid", Message: compareProblem(err)})
		}
	}
	if len(problems) > 0 {
		codes := make([]string, len(problems))
		for i, p := range problems {
			codes[i] = p.Code
		}
		return nil, &core.ValidationError{Codes: codes, Details: problems}
	}
	if in.RefType == instructions.RefFlag {
		return instructions.CompareFlags(flags[0], flags[1]), nil
	}
	return instructions.CompareSegments(segments[0], segments[1]), nil
}

// compareProblem says why a text is not what refType names.
func compareProblem(err error) string {
	switch {
	case errors.Is(err, instructions.ErrNotFlag):
		return "not a feature flag: it has no variations or no default rule"
	case errors.Is(err, instructions.ErrNotSeg):
		return "not a segment: it has a flag's variations or default rule"
	case errors.Is(err, jsonbody.ErrTooCostly):
		// Text whose decoding would take many times its size: thousands
		// of empty rules or conditions, which no real flag or segment has.
		return "made of more tiny values than a flag or segment has"
	}
	return "not a flag or segment as JSON text (a value of the wrong type, or a member named twice)"
}

// auditInstructions is an audit entry's instructions for FeatBit's history
// lists, from its snapshots; an empty list for what has none.
func auditInstructions(refType string, previous, current []byte) []instructions.Instruction {
	return instructions.Compare(refType, previous, current)
}

// FlagInstructions is a pending change's instructions (FeatBit's
// GetPendingChanges compares the draft's flags alike): from the flag as the
// change found it to what the change makes of it.
func FlagInstructions(base, target []byte) []instructions.Instruction {
	return instructions.Compare(instructions.RefFlag, base, target)
}
