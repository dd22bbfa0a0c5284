package segments

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/feed"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// SegmentInput creates a segment.
type SegmentInput struct {
	Name        string                  `json:"name"`
	Key         string                  `json:"key"`
	Type        string                  `json:"type"`
	Scopes      []string                `json:"scopes"`
	Description string                  `json:"description"`
	Included    []string                `json:"included"`
	Excluded    []string                `json:"excluded"`
	Rules       []flagstore.SegmentRule `json:"rules"`
	Tags        []string                `json:"tags"`
	flagstore.Change
}

// CheckSegment validates a whole segment as created or as a change leaves it,
// managed from env: it must stay visible there.
func CheckSegment(v *core.Validator, sg *flagstore.Segment, env core.EnvRow) {
	v.Required("name", sg.Name, core.MaxNameLen)
	v.Key("key", sg.Key)
	v.OneOf("type", sg.Type, flagstore.SegmentEnvironmentSpecific, flagstore.SegmentShared)
	v.Text("description", sg.Description, core.MaxDescriptionLen)
	if !validScopes(sg, env) {
		v.Add("scopes", "invalid")
	}
	for _, p := range targeting.CheckSegment(sg) {
		v.At(p.Field, p.Problem, p.Path, p.Message)
	}
}

// CreateSegment creates a segment managed from an environment.
func (s *Segments) CreateSegment(ctx context.Context, a *core.Actor, envID uuid.UUID, in SegmentInput) (flagstore.Segment, error) {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return flagstore.Segment{}, err
	}
	if err := flagstore.MayCreateSegment(a, env); err != nil {
		return flagstore.Segment{}, err
	}
	sg := flagstore.Segment{WorkspaceID: env.WorkspaceID, EnvID: envID, Name: strings.TrimSpace(in.Name), Key: in.Key, Type: in.Type,
		Scopes: in.Scopes, Description: in.Description, Included: core.OrEmpty(in.Included), Excluded: core.OrEmpty(in.Excluded),
		Rules: in.Rules, Tags: core.OrEmpty(in.Tags), IsEnvironmentSpecific: in.Type == flagstore.SegmentEnvironmentSpecific}
	if sg.Rules == nil {
		sg.Rules = []flagstore.SegmentRule{}
	}
	if sg.Type == flagstore.SegmentEnvironmentSpecific && len(sg.Scopes) == 0 {
		sg.Scopes = []string{flagstore.Scope(env.OrganizationKey, env.ProjectKey, env.Environment.Key)}
	}
	var v core.Validator
	CheckSegment(&v, &sg, env)
	in.Change.Check(&v, env)
	if err := v.Err(); err != nil {
		return flagstore.Segment{}, err
	}
	var out flagstore.Segment
	err = s.core.InTx(ctx, func(q *db.Queries) (err error) {
		out, err = s.InsertSegment(ctx, q, a, env, sg, in.Comment)
		return err
	})
	return out, err
}

// InsertSegment stores a new segment, checked and validated, managed from
// env, and records its creation in q: the one way a segment comes to exist
// (created, or imported with a file).
func (s *Segments) InsertSegment(ctx context.Context, q *db.Queries, a *core.Actor, env core.EnvRow, sg flagstore.Segment, comment string) (flagstore.Segment, error) {
	envs, err := flagstore.VisibleEnvs(ctx, q, env, sg)
	if err != nil {
		return flagstore.Segment{}, err
	}
	if err := flagstore.RequireInEnvs(a, []access.Action{access.CreateSegment}, envs, sg); err != nil {
		return flagstore.Segment{}, err
	}
	if err := checkSegmentKey(ctx, q, env, envs, sg); err != nil {
		return flagstore.Segment{}, err
	}
	rules, err := jsonv1.Marshal(sg.Rules)
	if err != nil {
		return flagstore.Segment{}, err
	}
	row, err := q.CreateSegment(ctx, db.CreateSegmentParams{WorkspaceID: sg.WorkspaceID, OrganizationID: env.OrganizationID,
		EnvID: env.Environment.ID, Key: sg.Key, Name: sg.Name, Type: sg.Type, Scopes: sg.Scopes, Description: sg.Description,
		Included: sg.Included, Excluded: sg.Excluded, Rules: rules, Tags: sg.Tags})
	if err != nil {
		return flagstore.Segment{}, err
	}
	out, err := SegmentFrom(row)
	if err != nil {
		return flagstore.Segment{}, err
	}
	return out, s.core.Audit(ctx, q, a, segmentChange(core.OpCreate, nil, &out, comment, env.OrganizationID, envs))
}

// segmentChange is the audit entry of a segment change of orgID; it is kept
// in the environment the segment was created in, as FeatBit does. Its event
// tells SDKs and caches that the segment changed in envs: every environment
// where it was or is visible.
func segmentChange(op string, before, after *flagstore.Segment, comment string, orgID uuid.UUID, envs []core.EnvRow) core.Change {
	ch := core.Change{RefType: "Segment", Operation: op, Comment: comment,
		Event: &feed.Event{Kind: feed.EventSegment, OrgID: orgID}}
	for _, e := range envs {
		ch.Event.EnvIDs = append(ch.Event.EnvIDs, e.Environment.ID)
	}
	for _, sg := range []*flagstore.Segment{before, after} {
		if sg != nil {
			ch.RefID, ch.Keyword, ch.EnvID, ch.Event.ID = sg.ID.String(), sg.Name, &sg.EnvID, sg.ID
		}
	}
	if before != nil {
		ch.Previous = before
	}
	if after != nil {
		ch.Current = after
	}
	return ch
}

// GetSegment returns a segment visible in an environment.
func (s *Segments) GetSegment(ctx context.Context, a *core.Actor, envID, id uuid.UUID) (flagstore.Segment, error) {
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return flagstore.Segment{}, err
	}
	row, err := s.core.Q.GetSegment(ctx, db.GetSegmentParams{OrganizationID: env.OrganizationID, ID: id})
	if err != nil {
		return flagstore.Segment{}, core.Translate(err)
	}
	sg, err := SegmentFrom(row)
	if err == nil && !flagstore.VisibleIn(sg, env) {
		err = core.ErrNotFound
	}
	return sg, err
}

// MaxSegmentIDs is the most segments one by-ids request may ask for.
const MaxSegmentIDs = 100

// SegmentsByIDs returns those of the given segments visible in an environment;
// unknown ids are left out.
func (s *Segments) SegmentsByIDs(ctx context.Context, a *core.Actor, envID uuid.UUID, ids []string) ([]flagstore.Segment, error) {
	rows, err := s.VisibleSegmentsByIDs(ctx, a, envID, ids)
	if err != nil {
		return nil, err
	}
	return SegmentsFrom(rows)
}

// VisibleSegmentsByIDs reads those of the given segments visible in an
// environment the caller may read.
func (s *Segments) VisibleSegmentsByIDs(ctx context.Context, a *core.Actor, envID uuid.UUID, ids []string) ([]db.Segment, error) {
	if len(ids) > MaxSegmentIDs {
		return nil, core.Invalid("ids_is_invalid")
	}
	parsed := make([]uuid.UUID, len(ids))
	for i, id := range ids {
		var err error
		if parsed[i], err = uuid.Parse(id); err != nil {
			return nil, core.Invalid("ids_is_invalid")
		}
	}
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return nil, err
	}
	rows, err := s.core.Q.SegmentsByIDs(ctx, db.SegmentsByIDsParams{OrganizationID: env.OrganizationID, Ids: parsed,
		EnvID: envID, Scopes: flagstore.EnvScopes(env)})
	return rows, core.Translate(err)
}

// SegmentFilter selects a page of the segments visible in an environment.
type SegmentFilter struct {
	Name       string
	IsArchived bool
	Page       core.Page
}

// ListSegments pages the segments visible in an environment, most recently changed first.
func (s *Segments) ListSegments(ctx context.Context, a *core.Actor, envID uuid.UUID, f SegmentFilter) (core.Paged[flagstore.Segment], error) {
	var v core.Validator
	f.Page.Check(&v)
	v.Text("name", f.Name, core.MaxNameLen)
	if err := v.Err(); err != nil {
		return core.Paged[flagstore.Segment]{}, err
	}
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return core.Paged[flagstore.Segment]{}, err
	}
	pattern := "%" + core.EscapeLike(strings.ToLower(f.Name)) + "%"
	rows, err := s.core.Q.ListSegments(ctx, db.ListSegmentsParams{OrganizationID: env.OrganizationID, EnvID: envID,
		Scopes: flagstore.EnvScopes(env), IsArchived: f.IsArchived, Pattern: pattern, PageSize: f.Page.Limit(), PageOffset: f.Page.Offset()})
	if err != nil {
		return core.Paged[flagstore.Segment]{}, core.Translate(err)
	}
	total, err := s.core.Q.CountSegments(ctx, db.CountSegmentsParams{OrganizationID: env.OrganizationID, EnvID: envID,
		Scopes: flagstore.EnvScopes(env), IsArchived: f.IsArchived, Pattern: pattern})
	if err != nil {
		return core.Paged[flagstore.Segment]{}, core.Translate(err)
	}
	items, err := SegmentsFrom(rows)
	return core.Paged[flagstore.Segment]{TotalCount: total, Items: items}, err
}

// SegmentTags lists the tags of the segments visible in an environment.
func (s *Segments) SegmentTags(ctx context.Context, a *core.Actor, envID uuid.UUID) ([]string, error) {
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return nil, err
	}
	tags, err := s.core.Q.ListSegmentTags(ctx, db.ListSegmentTagsParams{OrganizationID: env.OrganizationID, EnvID: envID, Scopes: flagstore.EnvScopes(env)})
	return tags, core.Translate(err)
}

// SegmentKeyUsed tells whether a segment key is taken for a new segment of a
// type made in an environment (FeatBit's is-key-used query, key and type):
// for an environment-specific one, by a segment visible in the environment;
// for a shared one, whose scopes are not chosen yet, by a segment visible in
// any environment of the organization (the widest scope it may take).
func (s *Segments) SegmentKeyUsed(ctx context.Context, a *core.Actor, envID uuid.UUID, key, typ string) (bool, error) {
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return false, err
	}
	sg := flagstore.Segment{ID: uuid.Nil, EnvID: envID, Key: key, Type: flagstore.SegmentEnvironmentSpecific}
	if typ == flagstore.SegmentShared {
		sg.Type, sg.Scopes = flagstore.SegmentShared, []string{flagstore.Scope(env.OrganizationKey, "", "")}
	}
	envs, err := flagstore.VisibleEnvs(ctx, s.core.Q, env, sg)
	if err != nil {
		return false, err
	}
	rows, err := s.core.Q.SegmentsWithKey(ctx, db.SegmentsWithKeyParams{OrganizationID: env.OrganizationID, Key: key})
	if err != nil {
		return false, core.Translate(err)
	}
	clash, err := keyClash(rows, sg, envs)
	return clash, err
}

// SegmentByKey finds the segment with a key among those visible in an
// environment (keys are unique there), for pages that follow a segment from
// one environment to another.
func (s *Segments) SegmentByKey(ctx context.Context, a *core.Actor, envID uuid.UUID, key string) (flagstore.Segment, error) {
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return flagstore.Segment{}, err
	}
	rows, err := s.core.Q.SegmentsWithKey(ctx, db.SegmentsWithKeyParams{OrganizationID: env.OrganizationID, Key: key})
	if err != nil {
		return flagstore.Segment{}, core.Translate(err)
	}
	scopes := flagstore.EnvScopes(env)
	for _, r := range rows {
		visible := r.Type == flagstore.SegmentEnvironmentSpecific && r.EnvID == envID ||
			r.Type == flagstore.SegmentShared && slices.ContainsFunc(r.Scopes, func(sc string) bool { return slices.Contains(scopes, sc) })
		if visible {
			out, err := SegmentsFrom([]db.Segment{r})
			if err != nil {
				return flagstore.Segment{}, err
			}
			return out[0], nil
		}
	}
	return flagstore.Segment{}, core.ErrNotFound
}

// changeSegment is the one way a segment changes, like changeFlag: under a
// row lock, checked on what actually changed, validated whole, audited; when
// who is in the segment changes, the flags that use it get a new revision.
func (s *Segments) changeSegment(ctx context.Context, a *core.Actor, envID, id uuid.UUID, ch flagstore.Change, action access.Action, edit func(*flagstore.Segment) error) (flagstore.Segment, error) {
	orgID, err := a.Org()
	if err != nil {
		return flagstore.Segment{}, err
	}
	var out flagstore.Segment
	err = s.core.InTx(ctx, func(q *db.Queries) (err error) {
		out, err = s.ChangeSegmentIn(ctx, q, a, orgID, envID, id, ch, action, edit)
		return err
	})
	return out, err
}

// ChangeSegmentIn is changeSegment in the caller's transaction q, for
// changes that commit with others (an imported file): the change pipeline
// (core.RunChange) with a segment's stages (segmentSubject).
func (s *Segments) ChangeSegmentIn(ctx context.Context, q *db.Queries, a *core.Actor, orgID, envID, id uuid.UUID, ch flagstore.Change, action access.Action, edit func(*flagstore.Segment) error) (flagstore.Segment, error) {
	sub := &segmentSubject{s: s, a: a, orgID: orgID, envID: envID, id: id, ch: ch, action: action}
	out, err := core.RunChange(ctx, q, core.Subject[flagstore.Segment, flagstore.FlagChangeRequest](sub), func(sg *flagstore.Segment) error {
		if err := edit(sg); err != nil {
			return err
		}
		sg.IsEnvironmentSpecific = sg.Type == flagstore.SegmentEnvironmentSpecific
		return nil
	}, nil)
	return out.Changed, err
}

// lockedSegment is a segment locked for a change (lockSegment).
type lockedSegment struct {
	flagstore.Segment
	// env is the environment the change is made from, where it is visible.
	env core.EnvRow
	// used tells whether any flag's rules name the segment.
	used bool
}

// lockSegment loads and locks a segment of organization orgID visible in
// environment EnvID, with that environment.
func lockSegment(ctx context.Context, q *db.Queries, orgID, envID, id uuid.UUID) (lockedSegment, error) {
	row, err := q.LockSegmentInOrganization(ctx, db.LockSegmentInOrganizationParams{OrganizationID: orgID, EnvID: envID, ID: id})
	if err != nil {
		return lockedSegment{}, err
	}
	sg, err := SegmentFrom(row.Segment)
	if err != nil {
		return lockedSegment{}, err
	}
	env := core.EnvRow{GetEnvironmentRow: db.GetEnvironmentRow{Environment: row.Environment, ProjectKey: row.ProjectKey, ProjectName: row.ProjectName,
		OrganizationID: row.OrganizationID, OrganizationKey: row.OrganizationKey, WorkspaceID: row.WorkspaceID}}
	if !flagstore.VisibleIn(sg, env) {
		return lockedSegment{}, core.ErrNotFound
	}
	return lockedSegment{Segment: sg, env: env, used: row.Used}, nil
}

// segmentChangeActions names the action each changed part of a segment needs.
func segmentChangeActions(before, after flagstore.Segment) []access.Action {
	var actions []access.Action
	add := func(changed bool, action access.Action) {
		if changed && !slices.Contains(actions, action) {
			actions = append(actions, action)
		}
	}
	add(before.Name != after.Name || before.Key != after.Key, access.UpdateSegmentName)
	add(before.Description != after.Description, access.UpdateSegmentDescription)
	add(!slices.Equal(before.Tags, after.Tags), access.UpdateSegmentTags)
	add(!slices.Equal(before.Included, after.Included) || !slices.Equal(before.Excluded, after.Excluded), access.UpdateSegmentTargetingUsers)
	add(!flagstore.SameJSON(before.Rules, after.Rules) || before.Type != after.Type || !slices.Equal(before.Scopes, after.Scopes), access.UpdateSegmentRules)
	add(!before.IsArchived && after.IsArchived, access.ArchiveSegment)
	add(before.IsArchived && !after.IsArchived, access.RestoreSegment)
	return actions
}

// DeleteSegment removes a segment for good, in any state, unless a flag uses it.
func (s *Segments) DeleteSegment(ctx context.Context, a *core.Actor, envID, id uuid.UUID, ch flagstore.Change) error {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return err
	}
	var v core.Validator
	ch.Check(&v, env)
	if err := v.Err(); err != nil {
		return err
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		locked, err := lockSegment(ctx, q, env.OrganizationID, envID, id)
		if err != nil {
			return err
		}
		before := locked.Segment
		if err := a.Require(access.DeleteSegment, flagstore.SegmentRNIn(env, before.Key, before.Tags)); err != nil {
			return err
		}
		envs, err := flagstore.VisibleEnvs(ctx, q, env, before)
		if err != nil {
			return err
		}
		if err := flagstore.RequireInEnvs(a, []access.Action{access.DeleteSegment}, envs, before); err != nil {
			return err
		}
		used, err := q.SegmentIsReferenced(ctx, id)
		if err != nil {
			return err
		}
		if used {
			return ErrSegmentIsBeingUsed
		}
		if _, err := q.DeleteSegment(ctx, id); err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, segmentChange(core.OpRemove, &before, nil, ch.Comment, env.OrganizationID, envs))
	})
}

// ArchiveSegment archives a segment no flag uses.
func (s *Segments) ArchiveSegment(ctx context.Context, a *core.Actor, envID, id uuid.UUID, ch flagstore.Change) (flagstore.Segment, error) {
	return s.changeSegment(ctx, a, envID, id, ch, access.ArchiveSegment, func(sg *flagstore.Segment) error {
		sg.IsArchived = true
		return nil
	})
}

// RestoreSegment makes an archived segment usable again; restoring one that is
// not archived changes nothing.
func (s *Segments) RestoreSegment(ctx context.Context, a *core.Actor, envID, id uuid.UUID, ch flagstore.Change) (flagstore.Segment, error) {
	return s.changeSegment(ctx, a, envID, id, ch, access.RestoreSegment, func(sg *flagstore.Segment) error {
		sg.IsArchived = false
		return nil
	})
}

// SegmentNameInput renames a segment.
type SegmentNameInput struct {
	Name string `json:"name"`
	flagstore.Change
}

// RenameSegment changes a segment's name.
func (s *Segments) RenameSegment(ctx context.Context, a *core.Actor, envID, id uuid.UUID, in SegmentNameInput) (flagstore.Segment, error) {
	return s.changeSegment(ctx, a, envID, id, in.Change, access.UpdateSegmentName, func(sg *flagstore.Segment) error {
		sg.Name = strings.TrimSpace(in.Name)
		return nil
	})
}

// SetSegmentDescription changes a segment's description.
func (s *Segments) SetSegmentDescription(ctx context.Context, a *core.Actor, envID, id uuid.UUID, in flagstore.DescriptionInput) (flagstore.Segment, error) {
	if in.Description == nil {
		return flagstore.Segment{}, core.Invalid("description_is_required")
	}
	return s.changeSegment(ctx, a, envID, id, in.Change, access.UpdateSegmentDescription, func(sg *flagstore.Segment) error {
		sg.Description = *in.Description
		return nil
	})
}

// SetSegmentTags replaces a segment's tags.
func (s *Segments) SetSegmentTags(ctx context.Context, a *core.Actor, envID, id uuid.UUID, in flagstore.TagsInput) (flagstore.Segment, error) {
	if in.Tags == nil {
		return flagstore.Segment{}, core.Invalid("tags_is_required")
	}
	return s.changeSegment(ctx, a, envID, id, in.Change, access.UpdateSegmentTags, func(sg *flagstore.Segment) error {
		sg.Tags = core.OrEmpty(*in.Tags)
		return nil
	})
}

// SegmentScopesInput replaces where a shared segment applies.
type SegmentScopesInput struct {
	Scopes []string `json:"scopes"`
	flagstore.Change
}

// SetSegmentScopes replaces where a shared segment applies: the same change
// as a patch of its scopes, needing the right to change its rules wherever
// it applies, before and after.
func (s *Segments) SetSegmentScopes(ctx context.Context, a *core.Actor, envID, id uuid.UUID, in SegmentScopesInput) (flagstore.Segment, error) {
	return s.changeSegment(ctx, a, envID, id, in.Change, access.UpdateSegmentRules, func(sg *flagstore.Segment) error {
		if sg.Type != flagstore.SegmentShared {
			return core.Invalid("scopes_is_invalid")
		}
		sg.Scopes = core.OrEmpty(in.Scopes)
		return nil
	})
}

// SegmentTargetingInput replaces who is in a segment: FeatBit's body
// {included, excluded, rules, comment}. The three replace the segment's; one
// left out becomes empty, as in FeatBit. A body naming none of them is refused.
type SegmentTargetingInput struct {
	Included *[]string                `json:"included"`
	Excluded *[]string                `json:"excluded"`
	Rules    *[]flagstore.SegmentRule `json:"rules"`
	flagstore.Change
}

// SetSegmentTargeting replaces a segment's included and excluded users and rules.
func (s *Segments) SetSegmentTargeting(ctx context.Context, a *core.Actor, envID, id uuid.UUID, in SegmentTargetingInput) (flagstore.Segment, error) {
	if in.Included == nil && in.Excluded == nil && in.Rules == nil {
		return flagstore.Segment{}, core.Invalid("targeting_is_required")
	}
	return s.changeSegment(ctx, a, envID, id, in.Change, access.UpdateSegmentRules, func(sg *flagstore.Segment) error {
		sg.Included, sg.Excluded, sg.Rules = []string{}, []string{}, []flagstore.SegmentRule{}
		if in.Included != nil {
			sg.Included = core.OrEmpty(*in.Included)
		}
		if in.Excluded != nil {
			sg.Excluded = core.OrEmpty(*in.Excluded)
		}
		if in.Rules != nil && *in.Rules != nil {
			sg.Rules = *in.Rules
		}
		return nil
	})
}

// segmentWritable are the members a segment patch may write; the rest (id,
// workspaceId, envId, createdAt, updatedAt, isEnvironmentSpecific) are the
// server's.
var segmentWritable = []string{"name", "key", "type", "scopes", "description", "included", "excluded", "rules", "tags", "isArchived"}

// PatchSegment applies an RFC 6902 JSON Patch to a segment, whole or not at all.
func (s *Segments) PatchSegment(ctx context.Context, a *core.Actor, envID, id uuid.UUID, ops json.RawMessage) (flagstore.Segment, error) {
	sg, err := s.changeSegment(ctx, a, envID, id, flagstore.Change{Comment: "Updated via patch"}, access.UpdateSegmentRules, func(sg *flagstore.Segment) error {
		var patched flagstore.Segment
		if err := flagstore.ApplyPatch(sg, ops, segmentWritable, &patched); err != nil {
			return err
		}
		patched.ID, patched.WorkspaceID, patched.EnvID, patched.CreatedAt, patched.UpdatedAt = sg.ID, sg.WorkspaceID, sg.EnvID, sg.CreatedAt, sg.UpdatedAt
		if patched.Key != sg.Key {
			return core.Invalid("patch_is_invalid", "/key cannot change")
		}
		patched.Included, patched.Excluded, patched.Tags = core.OrEmpty(patched.Included), core.OrEmpty(patched.Excluded), core.OrEmpty(patched.Tags)
		if patched.Rules == nil {
			patched.Rules = []flagstore.SegmentRule{}
		}
		*sg = patched
		return nil
	})
	return sg, flagstore.AsPatchError(err)
}

func SegmentFrom(r db.Segment) (flagstore.Segment, error) {
	sg := flagstore.Segment{ID: r.ID, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), WorkspaceID: r.WorkspaceID,
		EnvID: r.EnvID, Name: r.Name, Key: r.Key, Type: r.Type, Scopes: r.Scopes, Description: r.Description,
		Included: core.OrEmpty(r.Included), Excluded: core.OrEmpty(r.Excluded), Tags: core.OrEmpty(r.Tags), IsArchived: r.IsArchived,
		IsEnvironmentSpecific: r.Type == flagstore.SegmentEnvironmentSpecific}
	if err := flagstore.DecodeStored(flagstore.StoredPart{JSON: r.Rules, Into: &sg.Rules}); err != nil {
		return flagstore.Segment{}, err
	}
	return sg, nil
}

func SegmentsFrom(rows []db.Segment) ([]flagstore.Segment, error) {
	out := make([]flagstore.Segment, len(rows))
	for i, r := range rows {
		var err error
		if out[i], err = SegmentFrom(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}
