package segments

import (
	"context"
	"slices"

	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// segmentSubject is a segment as the change pipeline changes it. No change
// request covers a segment: where a change of who is in it needs approval
// (a flag of such an environment uses it) it is refused.
type segmentSubject struct {
	s            *Segments
	a            *core.Actor
	orgID, envID uuid.UUID
	id           uuid.UUID
	ch           flagstore.Change
	action       access.Action
	// used tells whether any flag's rules name the segment (Lock); envs
	// are where it is visible before or after (Check); users are the flags
	// that use it, locked, whose revision a change of who is in it renews
	// (Approval).
	used  bool
	envs  []core.EnvRow
	users []db.FeatureFlag
}

func (g *segmentSubject) Lock(ctx context.Context, q *db.Queries) (flagstore.Segment, core.EnvRow, error) {
	locked, err := lockSegment(ctx, q, g.orgID, g.envID, g.id)
	if err != nil {
		return flagstore.Segment{}, core.EnvRow{}, err
	}
	g.used = locked.used
	return locked.Segment, locked.env, nil
}

func (g *segmentSubject) Clone(sg flagstore.Segment) flagstore.Segment { return sg.Clone() }

func (g *segmentSubject) Check(ctx context.Context, q *db.Queries, env core.EnvRow, before flagstore.Segment, after *flagstore.Segment) error {
	actions := segmentChangeActions(before, *after)
	if len(actions) == 0 {
		actions = []access.Action{g.action}
	}
	// The route's environment first, so a caller with no rights there is
	// refused before the organization's environments are read.
	if err := flagstore.RequireInEnvs(g.a, actions, []core.EnvRow{env}, before, *after); err != nil {
		return err
	}
	var v core.Validator
	CheckSegment(&v, after, env)
	g.ch.Check(&v, env)
	if err := v.Err(); err != nil {
		return err
	}
	envs, err := flagstore.VisibleEnvs(ctx, q, env, before, *after)
	if err != nil {
		return err
	}
	g.envs = envs
	return flagstore.RequireInEnvs(g.a, actions, envs, before, *after)
}

func (g *segmentSubject) Approval(ctx context.Context, q *db.Queries, env core.EnvRow, before, after flagstore.Segment) error {
	users, err := segmentApproval(ctx, q, before, after, g.used)
	g.users = users
	return err
}

func (g *segmentSubject) Request(_ context.Context, _ *db.Queries, _ core.EnvRow, _, _ flagstore.Segment, _ core.Proposal, need error) (flagstore.FlagChangeRequest, error) {
	return flagstore.FlagChangeRequest{}, need
}

// Validate has nothing left to check: a segment is validated whole in
// Check, since where it is visible depends on it.
func (g *segmentSubject) Validate(context.Context, *db.Queries, core.EnvRow, flagstore.Segment, *flagstore.Segment) error {
	return nil
}

func (g *segmentSubject) Same(before, after flagstore.Segment) bool {
	return flagstore.SameJSON(before, after)
}

func (g *segmentSubject) Apply(ctx context.Context, q *db.Queries, env core.EnvRow, before, after flagstore.Segment) (flagstore.Segment, error) {
	if err := guardUse(ctx, q, before, after, g.used); err != nil {
		return flagstore.Segment{}, err
	}
	if after.Type != before.Type || !slices.Equal(after.Scopes, before.Scopes) {
		afterEnvs := slices.DeleteFunc(slices.Clone(g.envs), func(e core.EnvRow) bool { return !flagstore.VisibleIn(after, e) })
		if err := checkSegmentKey(ctx, q, env, afterEnvs, after); err != nil {
			return flagstore.Segment{}, err
		}
	}
	rules, err := jsonv1.Marshal(after.Rules)
	if err != nil {
		return flagstore.Segment{}, err
	}
	row, err := q.UpdateSegment(ctx, db.UpdateSegmentParams{ID: g.id, Name: after.Name, Type: after.Type, Scopes: after.Scopes,
		Description: after.Description, Included: after.Included, Excluded: after.Excluded, Rules: rules,
		Tags: after.Tags, IsArchived: after.IsArchived})
	if err != nil {
		return flagstore.Segment{}, err
	}
	out, err := SegmentFrom(row)
	if err != nil {
		return flagstore.Segment{}, err
	}
	op := core.OpUpdate
	switch {
	case after.IsArchived && !before.IsArchived:
		op = core.OpArchive
	case !after.IsArchived && before.IsArchived:
		op = core.OpRestore
	}
	if err := g.s.core.Audit(ctx, q, g.a, segmentChange(op, &before, &out, g.ch.Comment, env.OrganizationID, g.envs)); err != nil {
		return flagstore.Segment{}, err
	}
	return out, g.s.touchReferencingFlags(ctx, q, g.a, env.OrganizationID, out, g.users)
}
