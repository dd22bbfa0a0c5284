package flagsascode

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/describe"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
)

// Applying a Document to one environment. The whole file is checked
// first, with the store's own validators, and refused with every problem
// named by its path in the file; then every change is made in ONE
// transaction, all or none, each through the path the same change takes
// made by hand (insertFlag, changeFlagIn, insertSegment, changeSegmentIn,
// createDraft and addChangeRequest): the same permission checks, history
// entries, audit, webhooks and change events to SDKs, sent when the
// transaction commits. A dry run makes the same changes and rolls them
// back, so what it reports is exactly what the import would do, refusals
// included. Flags and segments the file leaves out are left as they are:
// an import never deletes.

// ImportInput applies a Document to an environment.
type ImportInput struct {
	Document Document
	// DryRun reports what would change and changes nothing.
	DryRun bool
	// Comment is every history entry's comment ("Imported from a file"
	// when empty).
	Comment string
	// Reason and Reviewers make the change requests where the environment's
	// changes need approval; Reason defaults to Comment.
	Reason    string
	Reviewers []uuid.UUID
}

// ImportPlan is what an import did, or would do on a dry run.
type ImportPlan struct {
	// Changes lists every segment (first) and flag of the file, in the
	// file's order, with what happened to it.
	Changes []PlannedChange `json:"changes"`
	// Applied is false on a dry run.
	Applied bool `json:"applied"`
	// PendingApproval lists the change requests made where the
	// environment's changes need approval: their changes wait for review.
	PendingApproval []flagstore.RequestedChange `json:"pendingApproval"`
}

// What an import does to one flag or segment (PlannedChange.Action).
const (
	ImportCreate    = "create"
	ImportUpdate    = "update"
	ImportUnchanged = "unchanged"
	// ImportRequested: what the flag serves changes only once a change
	// request is approved; its other changes (name, description, tags),
	// if any, were made.
	ImportRequested = "pendingApproval"
)

// PlannedChange is what an import does to one flag or segment, in the
// words of the history page.
type PlannedChange struct {
	Kind   string   `json:"kind"`
	Key    string   `json:"key"`
	Action string   `json:"action"`
	Words  []string `json:"words"`
}

// MaxImportItems bounds the flags and segments of one file.
const MaxImportItems = 2000

// errDryRun rolls a dry run's transaction back.
var errDryRun = errors.New("dry run")

// Import applies a Document to an environment: segments first, then flags,
// each created, changed, or left as it is, all in one transaction. Where
// the environment's changes need approval, a change to what an existing
// flag serves becomes a change request (one per flag, with in's reason and
// reviewers), and a new flag, on or off, comes in pending with a change
// request that brings it in (insertFlag). Each change needs the permission it needs made by
// hand.
func (s *FlagsAsCode) Import(ctx context.Context, a *core.Actor, envID uuid.UUID, in ImportInput) (ImportPlan, error) {
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return ImportPlan{}, err
	}
	in.Comment = cmp.Or(strings.TrimSpace(in.Comment), "Imported from a file")
	in.Reason = cmp.Or(strings.TrimSpace(in.Reason), in.Comment)
	visible, err := s.core.Q.ListEnvSegments(ctx, db.ListEnvSegmentsParams{OrganizationID: env.OrganizationID,
		EnvID: envID, Scopes: flagstore.EnvScopes(env)})
	if err != nil {
		return ImportPlan{}, core.Translate(err)
	}
	segs, err := segments.SegmentsFrom(visible)
	if err != nil {
		return ImportPlan{}, err
	}
	if err := s.checkDocument(env, in, segs); err != nil {
		return ImportPlan{}, err
	}
	var plan ImportPlan
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		plan = ImportPlan{Changes: []PlannedChange{}, PendingApproval: []flagstore.RequestedChange{}}
		im := importer{s: s, q: q, a: a, env: env, in: in, plan: &plan, ids: map[string]uuid.UUID{}, names: map[string]string{}}
		if err := im.segments(ctx, segs); err != nil {
			return err
		}
		if err := im.flags(ctx); err != nil {
			return err
		}
		if in.DryRun {
			return errDryRun
		}
		return nil
	})
	if errors.Is(err, errDryRun) {
		return plan, nil
	}
	if err != nil {
		return ImportPlan{}, err
	}
	plan.Applied = true
	return plan, nil
}

// importer makes one import's changes in its transaction q.
type importer struct {
	s    *FlagsAsCode
	q    *db.Queries
	a    *core.Actor
	env  core.EnvRow
	in   ImportInput
	plan *ImportPlan
	// ids are the segments by key, as flags' rules name them; names the
	// segments' names by id, for the words.
	ids   map[string]uuid.UUID
	names map[string]string
	// reviewed is set once the reviewers were checked.
	reviewed bool
}

func (im *importer) segmentNames(id string) (string, bool) {
	n, ok := im.names[id]
	return n, ok
}

func (im *importer) change() flagstore.Change { return flagstore.Change{Comment: im.in.Comment} }

// segments creates or changes the file's segments.
func (im *importer) segments(ctx context.Context, visible []flagstore.Segment) error {
	own := map[string]flagstore.Segment{}
	for _, sg := range visible {
		im.ids[sg.Key], im.names[sg.ID.String()] = sg.ID, sg.Name
		if sg.Type == flagstore.SegmentEnvironmentSpecific {
			own[sg.Key] = sg
		}
	}
	for i, d := range im.in.Document.Segments {
		want := segmentFromDoc(d, im.env)
		pc := PlannedChange{Kind: "segment", Key: d.Key, Action: ImportUnchanged, Words: []string{}}
		before, exists := own[d.Key]
		var out flagstore.Segment
		var err error
		switch {
		case !exists:
			pc.Action = ImportCreate
			if err = flagstore.MayCreateSegment(im.a, im.env); err == nil {
				out, err = im.s.segs.InsertSegment(ctx, im.q, im.a, im.env, want, im.in.Comment)
			}
			pc.Words = describe.SegmentChange(nil, &out, im.segmentNames)
		default:
			want.Tags = keepOrder(before.Tags, want.Tags)
			after := before
			setSegmentParts(&after, want)
			if flagstore.SameJSON(before, after) {
				out = before
				break
			}
			out, err = im.s.segs.ChangeSegmentIn(ctx, im.q, im.a, im.env.OrganizationID, im.env.Environment.ID, before.ID, im.change(),
				access.UpdateSegmentRules, func(sg *flagstore.Segment) error {
					setSegmentParts(sg, want)
					return nil
				})
			if words := describe.SegmentChange(&before, &out, im.segmentNames); err == nil && len(words) > 0 {
				pc.Action, pc.Words = ImportUpdate, words
			}
		}
		if err != nil {
			return at(fmt.Sprintf("segments[%d].", i), err)
		}
		im.ids[out.Key], im.names[out.ID.String()] = out.ID, out.Name
		im.plan.Changes = append(im.plan.Changes, pc)
	}
	return nil
}

// flags creates or changes the file's flags.
func (im *importer) flags(ctx context.Context) error {
	keys := make([]string, len(im.in.Document.Flags))
	for i, d := range im.in.Document.Flags {
		keys[i] = d.Key
	}
	rows, err := im.q.ListFlagsByKeys(ctx, db.ListFlagsByKeysParams{EnvID: im.env.Environment.ID, Keys: keys})
	if err != nil {
		return err
	}
	existing := map[string]flagstore.Flag{}
	for _, r := range rows {
		f, err := flagstore.FlagFrom(r)
		if err != nil {
			return err
		}
		existing[f.Key] = f
	}
	for i, d := range im.in.Document.Flags {
		want, err := flagFromDoc(d, im.ids)
		if err == nil {
			if before, ok := existing[d.Key]; ok {
				err = im.update(ctx, before, want)
			} else {
				err = im.create(ctx, want)
			}
		}
		if err != nil {
			return at(fmt.Sprintf("flags[%d].", i), err)
		}
	}
	return nil
}

// create makes a new flag as the file has it, as creating and then
// changing it by hand would: CreateFlag, and the actions for the parts it
// sets. Where changes need approval, the flag comes in pending with a
// change request of the import's reason and reviewers (insertFlag), and a
// flag the file has archived comes in archived, which needs none.
func (im *importer) create(ctx context.Context, want flagstore.Flag) error {
	a, env := im.a, im.env
	if err := flagstore.MayCreateFlag(a, env); err != nil {
		return err
	}
	f := want
	f.ID, f.EnvID, f.Revision, f.CreatorID, f.UpdatorID = uuid.New(), env.Environment.ID, uuid.New(), a.UserID, a.UserID
	f.IsArchived = false
	actions := append([]access.Action{access.CreateFlag}, flagstore.FlagChangeActions(flagstore.CreatedShape(f), f)...)
	if f.IsEnabled {
		actions = append(actions, access.ToggleFlag)
	}
	archiveNow := want.IsArchived && flagstore.ApprovalsNeeded(env.Environment) > 0
	if archiveNow {
		actions = append(actions, access.ArchiveFlag)
		f.IsArchived = true
	}
	if err := flagstore.RequireFlagActions(a, env, actions, f); err != nil {
		return err
	}
	var v core.Validator
	refs := flagstore.CheckFlag(&v, &f)
	if err := v.Err(); err != nil {
		return err
	}
	if err := im.s.flags.CheckSegmentRefs(ctx, im.q, env, f.Rules, refs); err != nil {
		return err
	}
	out, cr, err := im.s.flags.InsertFlag(ctx, im.q, a, env, f, refs, im.in.Comment, flagstore.NewFlagRequest{Reason: im.in.Reason, Reviewers: im.in.Reviewers})
	if err != nil {
		return err
	}
	pc := PlannedChange{Kind: "flag", Key: f.Key, Action: ImportCreate, Words: describe.FlagChange(nil, &out, im.segmentNames)}
	if cr != nil {
		cr.Words = flagstore.NewFlagWords(f, im.segmentNames)
		im.plan.PendingApproval = append(im.plan.PendingApproval, *cr)
	}
	if want.IsArchived && !archiveNow {
		if _, err := im.s.flags.ChangeFlagIn(ctx, im.q, a, env, f.Key, im.change(), access.ArchiveFlag, "", func(f *flagstore.Flag) error {
			f.IsArchived = true
			return nil
		}); err != nil {
			return err
		}
	}
	if want.IsArchived {
		pc.Words = append(pc.Words, "Archived the flag")
	}
	im.plan.Changes = append(im.plan.Changes, pc)
	return nil
}

// update changes an existing flag to what the file has: restoring it
// first or archiving it last where the file says so (an archived flag
// changes only by being restored).
func (im *importer) update(ctx context.Context, before, want flagstore.Flag) error {
	after := before.Clone()
	want.Tags = keepOrder(before.Tags, want.Tags)
	setFlagParts(&after, want)
	after.IsArchived = want.IsArchived
	pc := PlannedChange{Kind: "flag", Key: before.Key, Action: ImportUnchanged, Words: []string{}}
	if flagstore.SameFlag(before, after) {
		im.plan.Changes = append(im.plan.Changes, pc)
		return nil
	}
	if before.IsArchived && want.IsArchived {
		return flagstore.ErrFlagIsArchived
	}
	pc.Action, pc.Words = ImportUpdate, describe.FlagChange(&before, &after, im.segmentNames)
	cur := before
	edit := func(action access.Action, fn func(*flagstore.Flag)) error {
		var err error
		cur, err = im.s.flags.ChangeFlagIn(ctx, im.q, im.a, im.env, before.Key, im.change(), action, "", func(f *flagstore.Flag) error {
			fn(f)
			return nil
		})
		return err
	}
	if before.IsArchived {
		if err := edit(access.RestoreFlag, func(f *flagstore.Flag) { f.IsArchived = false }); err != nil {
			return err
		}
	}
	content := cur.Clone()
	setFlagParts(&content, want)
	if flagstore.ApprovalsNeeded(im.env.Environment) > 0 && flagstore.ServesDifferently(cur, content) {
		// Name, description and tags need no approval: they change now;
		// what the flag serves waits for a change request.
		if cur.Name != content.Name || cur.Description != content.Description || !flagstore.SameJSON(cur.Tags, content.Tags) {
			if err := edit(access.UpdateFlagName, func(f *flagstore.Flag) {
				f.Name, f.Description, f.Tags = content.Name, content.Description, content.Tags
			}); err != nil {
				return err
			}
		}
		pc.Action = ImportRequested
		if err := im.request(ctx, cur, content); err != nil {
			return err
		}
	} else if !flagstore.SameFlag(cur, content) {
		if err := edit(access.UpdateFlagTargetingRules, func(f *flagstore.Flag) { setFlagParts(f, want) }); err != nil {
			return err
		}
	}
	if want.IsArchived && !before.IsArchived {
		if err := edit(access.ArchiveFlag, func(f *flagstore.Flag) { f.IsArchived = true }); err != nil {
			return err
		}
	}
	im.plan.Changes = append(im.plan.Changes, pc)
	return nil
}

// setSegmentParts gives sg every part of want the file sets.
func setSegmentParts(sg *flagstore.Segment, want flagstore.Segment) {
	sg.Name, sg.Description, sg.Tags, sg.IsArchived = want.Name, want.Description, want.Tags, want.IsArchived
	sg.Included, sg.Excluded, sg.Rules = want.Included, want.Excluded, want.Rules
}

// keepOrder returns have when it holds the same tags as want: the file
// sorts them, and an order alone is no change.
func keepOrder(have, want []string) []string {
	if slices.Equal(sortedTags(have), sortedTags(want)) {
		return have
	}
	return want
}

// setFlagParts gives f every part of want the file sets: all but its
// identity, key, revision, history and archived state.
func setFlagParts(f *flagstore.Flag, want flagstore.Flag) {
	f.Name, f.Description, f.Tags = want.Name, want.Description, want.Tags
	f.IsEnabled, f.VariationType, f.Variations, f.DisabledVariationID = want.IsEnabled, want.VariationType, want.Variations, want.DisabledVariationID
	f.TargetUsers, f.Rules, f.Fallthrough, f.ExptIncludeAllTargets = want.TargetUsers, want.Rules, want.Fallthrough, want.ExptIncludeAllTargets
}

// request proposes the change of flag from to to as a change request, as
// CreateFlagChangeRequest makes one: a draft checked as if the change were
// made now, with the import's reason and reviewers.
func (im *importer) request(ctx context.Context, from, to flagstore.Flag) error {
	if !im.reviewed {
		var v core.Validator
		v.Required("reason", im.in.Reason, core.MaxCommentLen)
		if err := v.Err(); err != nil {
			return err
		}
		if err := flagstore.CheckReviewers(ctx, im.q, im.a, im.env, im.in.Reviewers); err != nil {
			return err
		}
		im.reviewed = true
	}
	target, err := json.Marshal(to)
	if err != nil {
		return err
	}
	d, err := im.s.flags.CreateDraft(ctx, im.q, im.a, im.env, from.Key, flagstore.DraftInput{TargetFlag: target, Change: flagstore.Change{Comment: im.in.Reason}})
	if err != nil {
		return err
	}
	cr, err := im.s.flags.AddChangeRequest(ctx, im.q, im.a, im.env, d, im.in.Reason, im.in.Reviewers)
	if err != nil {
		return err
	}
	im.plan.PendingApproval = append(im.plan.PendingApproval, flagstore.RequestedChange{Key: from.Key, ChangeRequestID: cr.ID,
		Words: describe.FlagChange(&from, &to, im.segmentNames)})
	return nil
}

// at names where in the file a change was refused: a validation error's
// paths get the prefix; any other error keeps its kind, and says where.
func at(prefix string, err error) error {
	var verr *core.ValidationError
	if errors.As(err, &verr) {
		out := &core.ValidationError{Codes: verr.Codes}
		for _, d := range verr.Details {
			d.Path = prefix + d.Path
			out.Details = append(out.Details, d)
		}
		return out
	}
	return fmt.Errorf("%s: %w", strings.TrimSuffix(prefix, "."), err)
}

// AuthorizeImport checks what an import needs whatever its file holds:
// reading the environment. Each change it makes is checked as it is made.
func (s *FlagsAsCode) AuthorizeImport(ctx context.Context, a *core.Actor, envID uuid.UUID) error {
	_, err := s.core.ReadableEnv(ctx, a, envID)
	return err
}
