package sdkdata

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/describe"
	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
)

// EndUser is a user SDKs of an environment evaluated for (FeatBit's EndUser):
// CreatedAt is when its key was first seen, UpdatedAt when last seen.
type EndUser struct {
	ID                   uuid.UUID           `json:"id"`
	WorkspaceID          *uuid.UUID          `json:"workspaceId"`
	EnvID                uuid.UUID           `json:"envId"`
	KeyID                string              `json:"keyId"`
	Name                 *string             `json:"name"`
	CustomizedProperties []eval.UserProperty `json:"customizedProperties"`
	CreatedAt            time.Time           `json:"createdAt"`
	UpdatedAt            time.Time           `json:"updatedAt"`
}

// Evaluated is the end user as the evaluator takes it.
func (u EndUser) Evaluated() eval.EndUser {
	return eval.EndUser{KeyID: u.KeyID, Name: u.Name, CustomizedProperties: u.CustomizedProperties}
}

func endUserFrom(r db.EndUser) EndUser {
	u := EndUser{ID: r.ID, EnvID: r.EnvID, KeyID: r.KeyID, Name: r.Name, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if json.Unmarshal(r.Properties, &u.CustomizedProperties) != nil || u.CustomizedProperties == nil {
		u.CustomizedProperties = []eval.UserProperty{}
	}
	return u
}

func endUsersFrom(rows []db.EndUser) []EndUser {
	out := make([]EndUser, len(rows))
	for i, r := range rows {
		out[i] = endUserFrom(r)
	}
	return out
}

// writableEnv loads an environment the actor may change end users and their
// properties in. FeatBit checks no action for them; changing what an
// environment knows about its users is an environment setting, so it takes
// UpdateEnvSettings on the environment.
func (s *SDK) writableEnv(ctx context.Context, a *core.Actor, envID uuid.UUID) (core.EnvRow, error) {
	env, err := s.core.EnvironmentOf(ctx, a, envID)
	if err != nil {
		return core.EnvRow{}, err
	}
	return env, a.Require(access.UpdateEnvSettings, env.RN())
}

// GetEndUser returns one end user of an environment.
func (s *SDK) GetEndUser(ctx context.Context, a *core.Actor, envID, id uuid.UUID) (EndUser, error) {
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return EndUser{}, err
	}
	row, err := s.core.Q.GetEndUser(ctx, db.GetEndUserParams{EnvID: envID, ID: id})
	if err != nil {
		return EndUser{}, core.Translate(err)
	}
	return endUserFrom(row), nil
}

// Page cursor directions (FeatBit's PageCursorDirection).
const (
	CursorForward  = "forward"
	CursorBackward = "backward"
)

// PageCursor marks where a keyset page starts: after the end user (id,
// updatedAt) going forward (to users seen earlier), or before it going backward.
type PageCursor struct {
	ID        uuid.UUID `json:"id"`
	UpdatedAt time.Time `json:"updatedAt"`
	Direction string    `json:"direction"`
}

// EndUserFilter selects a page of end users (FeatBit's EndUserFilter): those
// whose key or name contains SearchText (case-insensitively), most
// recently seen first, from Cursor, PageSize at a time.
type EndUserFilter struct {
	SearchText string      `json:"searchText"`
	Cursor     *PageCursor `json:"cursor"`
	PageSize   int         `json:"pageSize"`
}

// CursorPaged is one keyset page (FeatBit's CursorPagedResult): the cursors
// of the pages before and after it, nil when there is none.
type CursorPaged[T any] struct {
	Items          []T         `json:"items"`
	PreviousCursor *PageCursor `json:"previousCursor"`
	NextCursor     *PageCursor `json:"nextCursor"`
}

// searchPattern is a LIKE pattern matching text that contains search
// (FeatBit's EndUserService: Contains, ignoring case), lower-cased; "%" for
// no search. The trigram indexes of the key and the name serve it.
func searchPattern(search string) string {
	search = strings.ToLower(strings.TrimSpace(search))
	if search == "" {
		return "%"
	}
	return "%" + core.EscapeLike(search) + "%"
}

// maxCursor is before every row: the first page's cursor.
var maxCursor = PageCursor{ID: uuid.Max, UpdatedAt: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), Direction: CursorForward}

// ListEndUsers pages an environment's end users by keyset (the end_users_seen
// index), so every page costs the same however many millions there are.
func (s *SDK) ListEndUsers(ctx context.Context, a *core.Actor, envID uuid.UUID, f EndUserFilter) (CursorPaged[EndUser], error) {
	var v core.Validator
	if f.PageSize == 0 {
		f.PageSize = core.DefaultPageSize
	}
	if f.PageSize < 1 || f.PageSize > core.MaxPageSize {
		v.Add("pageSize", "invalid")
	}
	v.Text("searchText", f.SearchText, core.MaxNameLen)
	cur := maxCursor
	if f.Cursor != nil {
		cur = *f.Cursor
		if cur.Direction == "" {
			cur.Direction = CursorForward
		}
		if cur.Direction != CursorForward && cur.Direction != CursorBackward || cur.UpdatedAt.IsZero() {
			v.Add("cursor", "invalid")
		} else {
			v.When("cursor", &cur.UpdatedAt)
		}
	}
	if err := v.Err(); err != nil {
		return CursorPaged[EndUser]{}, err
	}
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return CursorPaged[EndUser]{}, err
	}
	pattern, lim := searchPattern(f.SearchText), int32(f.PageSize+1)
	out := CursorPaged[EndUser]{Items: []EndUser{}}
	if cur.Direction == CursorForward {
		rows, err := s.core.Q.EndUsersBefore(ctx, db.EndUsersBeforeParams{EnvID: envID, UpdatedAt: cur.UpdatedAt, ID: cur.ID, Pattern: pattern, Lim: lim})
		if err != nil {
			return CursorPaged[EndUser]{}, core.Translate(err)
		}
		more := len(rows) > f.PageSize
		out.Items = endUsersFrom(rows[:min(len(rows), f.PageSize)])
		if more {
			out.NextCursor = cursorAt(out.Items[len(out.Items)-1], CursorForward)
		}
		if f.Cursor != nil && len(out.Items) > 0 {
			out.PreviousCursor = cursorAt(out.Items[0], CursorBackward)
		}
		return out, nil
	}
	rows, err := s.core.Q.EndUsersAfter(ctx, db.EndUsersAfterParams{EnvID: envID, UpdatedAt: cur.UpdatedAt, ID: cur.ID, Pattern: pattern, Lim: lim})
	if err != nil {
		return CursorPaged[EndUser]{}, core.Translate(err)
	}
	more := len(rows) > f.PageSize
	rows = rows[:min(len(rows), f.PageSize)]
	slices.Reverse(rows)
	out.Items = endUsersFrom(rows)
	if len(out.Items) > 0 {
		if more {
			out.PreviousCursor = cursorAt(out.Items[0], CursorBackward)
		}
		out.NextCursor = cursorAt(out.Items[len(out.Items)-1], CursorForward)
	}
	return out, nil
}

func cursorAt(u EndUser, direction string) *PageCursor {
	return &PageCursor{ID: u.ID, UpdatedAt: u.UpdatedAt, Direction: direction}
}

// EndUserSearchFilter is FeatBit's search body: end users whose key or name
// contains SearchText, but not those in ExcludedKeyIds, at most Limit
// (10 when 0, at most 100). There are no global users: GlobalUserOnly finds none.
type EndUserSearchFilter struct {
	SearchText     string   `json:"searchText"`
	ExcludedKeyIds []string `json:"excludedKeyIds"`
	GlobalUserOnly bool     `json:"globalUserOnly"`
	Limit          int      `json:"limit"`
}

// maxKeysPerRequest bounds lists of keys in one request.
const maxKeysPerRequest = 1_000

// SearchEndUsers finds end users by part of their key or name.
func (s *SDK) SearchEndUsers(ctx context.Context, a *core.Actor, envID uuid.UUID, f EndUserSearchFilter) ([]EndUser, error) {
	var v core.Validator
	if f.Limit == 0 {
		f.Limit = core.DefaultPageSize
	}
	if f.Limit < 1 || f.Limit > core.MaxPageSize {
		v.Add("limit", "invalid")
	}
	if len(f.ExcludedKeyIds) > maxKeysPerRequest {
		v.Add("excludedKeyIds", "invalid")
	}
	v.Text("searchText", f.SearchText, core.MaxNameLen)
	if err := v.Err(); err != nil {
		return nil, err
	}
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return nil, err
	}
	if f.GlobalUserOnly {
		return []EndUser{}, nil
	}
	rows, err := s.core.Q.EndUsersBefore(ctx, db.EndUsersBeforeParams{EnvID: envID, UpdatedAt: maxCursor.UpdatedAt, ID: maxCursor.ID,
		Pattern: searchPattern(f.SearchText), Lim: int32(f.Limit + len(f.ExcludedKeyIds))})
	if err != nil {
		return nil, core.Translate(err)
	}
	out := []EndUser{}
	for _, r := range rows {
		if len(out) < f.Limit && !slices.Contains(f.ExcludedKeyIds, r.KeyID) {
			out = append(out, endUserFrom(r))
		}
	}
	return out, nil
}

// EndUsersByKeys returns the end users with the given keys (at most 1,000).
func (s *SDK) EndUsersByKeys(ctx context.Context, a *core.Actor, envID uuid.UUID, keys []string) ([]EndUser, error) {
	if len(keys) > maxKeysPerRequest {
		return nil, core.Invalid("keyIds_is_invalid")
	}
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return nil, err
	}
	if keys == nil {
		keys = []string{}
	}
	rows, err := s.core.Q.EndUsersByKeys(ctx, db.EndUsersByKeysParams{EnvID: envID, KeyIds: keys})
	if err != nil {
		return nil, core.Translate(err)
	}
	return endUsersFrom(rows), nil
}

// UpsertEndUser is FeatBit's upsert body: the user's name and properties
// replace what is kept for its key.
type UpsertEndUser struct {
	KeyID                string              `json:"keyId"`
	Name                 string              `json:"name"`
	CustomizedProperties []eval.UserProperty `json:"customizedProperties"`
}

// UpsertEndUser adds an end user or replaces its name and properties, seen
// now; a new key past the environment's bound is refused
// (end_users_limit_is_reached).
func (s *SDK) UpsertEndUser(ctx context.Context, a *core.Actor, envID uuid.UUID, in UpsertEndUser) (EndUser, error) {
	var v core.Validator
	v.Required("keyId", in.KeyID, core.MaxNameLen)
	v.Required("name", in.Name, core.MaxNameLen)
	if err := v.Err(); err != nil {
		return EndUser{}, err
	}
	u := eval.EndUser{KeyID: in.KeyID, Name: &in.Name, CustomizedProperties: in.CustomizedProperties}
	if err := CheckEndUser(u); err != nil {
		return EndUser{}, err
	}
	env, err := s.writableEnv(ctx, a, envID)
	if err != nil {
		return EndUser{}, err
	}
	var out EndUser
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		before, err := q.GetEndUserByKey(ctx, db.GetEndUserByKeyParams{EnvID: envID, KeyID: in.KeyID})
		if err = core.Translate(err); err != nil && !errors.Is(err, core.ErrNotFound) {
			return err
		}
		now := time.Now()
		dropped, err := q.UpsertEndUsers(ctx, db.UpsertEndUsersParams{EnvIds: []uuid.UUID{envID}, KeyIds: []string{in.KeyID},
			Names: []string{in.Name}, Properties: []json.RawMessage{propertiesJSON(in.CustomizedProperties)},
			FirstSeen: []time.Time{now}, LastSeen: []time.Time{now}, MaxPerEnv: s.core.MaxEndUsersPerEnv, MaxProperties: core.MaxEndUserProperties})
		if err != nil {
			return err
		}
		if dropped > 0 {
			return core.Invalid("end_users_limit_is_reached")
		}
		row, err := q.GetEndUserByKey(ctx, db.GetEndUserByKeyParams{EnvID: envID, KeyID: in.KeyID})
		if err != nil {
			return err
		}
		out = endUserFrom(row)
		ch := core.Change{RefType: "EndUser", RefID: out.ID.String(), Keyword: out.KeyID, Operation: core.OpCreate,
			EnvID: &env.Environment.ID, Current: out}
		if before.ID != uuid.Nil {
			prev := endUserFrom(before)
			ch.Operation, ch.Previous = core.OpUpdate, prev
		}
		return s.core.Audit(ctx, q, a, ch)
	})
	return out, err
}

// EndUserStatus is how many end users an environment keeps, of how many it may.
type EndUserStatus struct {
	Count        int64 `json:"count"`
	Max          int64 `json:"max"`
	LimitReached bool  `json:"limitReached"`
}

// EndUserStatus says whether an environment reached its bound on end users,
// past which new keys are dropped.
func (s *SDK) EndUserStatus(ctx context.Context, a *core.Actor, envID uuid.UUID) (EndUserStatus, error) {
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return EndUserStatus{}, err
	}
	n, err := s.core.Q.CountEnvEndUsers(ctx, envID)
	if err != nil {
		return EndUserStatus{}, core.Translate(err)
	}
	return EndUserStatus{Count: n, Max: s.core.MaxEndUsersPerEnv, LimitReached: n >= s.core.MaxEndUsersPerEnv}, nil
}

// EndUserFlag is what a flag serves an end user now (FeatBit's EndUserFlagVm)
// and, for people, why: ServedBy names what decided ("off", "targeted", the
// rule's label, "default", "archived") and Why says it in sentences.
type EndUserFlag struct {
	Name           string                `json:"name"`
	Key            string                `json:"key"`
	Variations     []flagstore.Variation `json:"variations"`
	VariationType  string                `json:"variationType"`
	MatchVariation *string               `json:"matchVariation"`
	MatchReason    string                `json:"matchReason"`
	VariationID    string                `json:"variationId,omitempty"`
	ServedBy       string                `json:"servedBy"`
	Why            []string              `json:"why"`
}

// EndUserFlagFilter selects flags to evaluate for an end user (FeatBit's
// FeatureFlagFilter): part of the name or key, archived or not, one page.
type EndUserFlagFilter struct {
	Name       string
	IsArchived bool
	Page       core.Page
}

// endUserEnv reads an end user and everything its environment's SDKs
// evaluate with.
func (s *SDK) endUserEnv(ctx context.Context, a *core.Actor, envID, id uuid.UUID) (EndUser, EnvData, error) {
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return EndUser{}, EnvData{}, err
	}
	row, err := s.core.Q.GetEndUser(ctx, db.GetEndUserParams{EnvID: envID, ID: id})
	if err != nil {
		return EndUser{}, EnvData{}, core.Translate(err)
	}
	data, err := s.SDKData(ctx, SDKEnv{EnvID: envID, OrgID: env.OrganizationID})
	return endUserFrom(row), data, err
}

// EndUserFlags evaluates every flag selected for an end user, as SDKs of its
// environment would now, with the reason.
func (s *SDK) EndUserFlags(ctx context.Context, a *core.Actor, envID, id uuid.UUID, f EndUserFlagFilter) (core.Paged[EndUserFlag], error) {
	var v core.Validator
	f.Page.Check(&v)
	v.Text("name", f.Name, core.MaxNameLen)
	if err := v.Err(); err != nil {
		return core.Paged[EndUserFlag]{}, err
	}
	u, data, err := s.endUserEnv(ctx, a, envID, id)
	if err != nil {
		return core.Paged[EndUserFlag]{}, err
	}
	segments := eval.SegmentMap(data.Segments)
	names := func(id string) (string, bool) {
		for _, sg := range data.Segments {
			if sg.ID.String() == id {
				return sg.Name, true
			}
		}
		return "", false
	}
	name := strings.ToLower(f.Name)
	var all []EndUserFlag
	for i := range data.Flags {
		fl := &data.Flags[i]
		if fl.IsArchived != f.IsArchived || (name != "" && !strings.Contains(strings.ToLower(fl.Name), name) &&
			!strings.Contains(strings.ToLower(fl.Key), name)) {
			continue
		}
		ev := eval.Evaluate(fl, u.Evaluated(), segments)
		item := EndUserFlag{Name: fl.Name, Key: fl.Key, Variations: fl.Variations, VariationType: fl.VariationType,
			MatchReason: ev.Reason, ServedBy: servedBy(fl, ev), Why: describe.Explain(*fl, u.Evaluated(), ev, names)}
		if ev.Variation != nil {
			item.MatchVariation, item.VariationID = &ev.Variation.Value, ev.Variation.ID
		}
		all = append(all, item)
	}
	slices.SortFunc(all, func(x, y EndUserFlag) int { return strings.Compare(x.Key, y.Key) })
	out := core.Paged[EndUserFlag]{TotalCount: int64(len(all)), Items: []EndUserFlag{}}
	if lo := int(f.Page.Offset()); lo < len(all) {
		out.Items = all[lo:min(len(all), lo+f.Page.Size)]
	}
	return out, nil
}

// servedBy names what decided an evaluation, as the user page shows it.
func servedBy(f *flagstore.Flag, ev eval.Evaluation) string {
	switch ev.Kind {
	case eval.MatchDisabled:
		return "off"
	case eval.MatchArchived:
		return "archived"
	case eval.MatchTargeted:
		return "targeted"
	case eval.MatchRule:
		for i, r := range f.Rules {
			if r.ID == ev.RuleID {
				return describe.RuleLabel(r.Name, i)
			}
		}
	}
	return "default"
}

// EndUserSegment is a segment an end user is in (FeatBit's EndUserSegmentVm).
type EndUserSegment struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Type      string    `json:"type"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// EndUserSegments returns the segments visible in the environment, archived
// ones left out, that the end user is in.
func (s *SDK) EndUserSegments(ctx context.Context, a *core.Actor, envID, id uuid.UUID) ([]EndUserSegment, error) {
	u, data, err := s.endUserEnv(ctx, a, envID, id)
	if err != nil {
		return nil, err
	}
	out := []EndUserSegment{}
	for i := range data.Segments {
		sg := &data.Segments[i]
		if !sg.IsArchived && eval.InSegment(sg, u.Evaluated()) {
			out = append(out, EndUserSegment{ID: sg.ID.String(), Name: sg.Name, Type: sg.Type, UpdatedAt: sg.UpdatedAt})
		}
	}
	slices.SortFunc(out, func(x, y EndUserSegment) int {
		return strings.Compare(strings.ToLower(x.Name), strings.ToLower(y.Name))
	})
	return out, nil
}

// FlagEndUserFilter is FeatBit's FeatureFlagEndUserFilter: the users of a
// flag seen from From to To (Unix milliseconds), whose key or name contains
// Query, optionally only those served VariationID.
type FlagEndUserFilter struct {
	Query          string
	FeatureFlagKey string
	VariationID    string
	From, To       int64
	Page           core.Page
}

// FlagEndUser is one user of a flag (FeatBit's FeatureFlagEndUserStatsVm):
// the variation's name, and when the user was last seen.
type FlagEndUser struct {
	Variation       string `json:"variation"`
	KeyID           string `json:"keyId"`
	Name            string `json:"name"`
	LastEvaluatedAt string `json:"lastEvaluatedAt"`
}

// maxFlagEndUsersCounted caps the total get-by-featureflag reports.
const maxFlagEndUsersCounted = 100_000

// FlagEndUsers pages the end users seen in a time range with what a flag
// serves them. Bunting keeps end users, not one row per evaluation, so this
// is the flag evaluated now for each user last seen in the range, and
// lastEvaluatedAt is when the user was last seen; VariationID filters the
// page, and TotalCount counts the users seen (at most 100,000).
func (s *SDK) FlagEndUsers(ctx context.Context, a *core.Actor, envID uuid.UUID, f FlagEndUserFilter) (core.Paged[FlagEndUser], error) {
	var v core.Validator
	f.Page.Check(&v)
	if f.FeatureFlagKey == "" {
		v.Add("featureFlagKey", "required")
	}
	v.Millis("from", f.From)
	v.Millis("to", f.To)
	v.Text("query", f.Query, core.MaxNameLen)
	if err := v.Err(); err != nil {
		return core.Paged[FlagEndUser]{}, err
	}
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return core.Paged[FlagEndUser]{}, err
	}
	data, err := s.SDKData(ctx, SDKEnv{EnvID: envID, OrgID: env.OrganizationID})
	if err != nil {
		return core.Paged[FlagEndUser]{}, err
	}
	i := slices.IndexFunc(data.Flags, func(fl flagstore.Flag) bool { return fl.Key == f.FeatureFlagKey })
	if i < 0 {
		return core.Paged[FlagEndUser]{}, core.ErrNotFound
	}
	fl := &data.Flags[i]
	from, to := time.UnixMilli(f.From), time.UnixMilli(f.To)
	pattern := searchPattern(f.Query)
	rows, err := s.core.Q.EndUsersSeenBetween(ctx, db.EndUsersSeenBetweenParams{EnvID: envID, SeenFrom: from, SeenTo: to,
		Pattern: pattern, Skip: f.Page.Offset(), Lim: f.Page.Limit()})
	if err != nil {
		return core.Paged[FlagEndUser]{}, core.Translate(err)
	}
	total, err := s.core.Q.CountEndUsersSeenBetween(ctx, db.CountEndUsersSeenBetweenParams{EnvID: envID, SeenFrom: from, SeenTo: to,
		Pattern: pattern, Cap: maxFlagEndUsersCounted})
	if err != nil {
		return core.Paged[FlagEndUser]{}, core.Translate(err)
	}
	out := core.Paged[FlagEndUser]{TotalCount: total, Items: []FlagEndUser{}}
	segments := eval.SegmentMap(data.Segments)
	for _, r := range rows {
		u := endUserFrom(r)
		ev := eval.Evaluate(fl, u.Evaluated(), segments)
		if ev.Variation == nil || (f.VariationID != "" && ev.Variation.ID != f.VariationID) {
			continue
		}
		name := ""
		if u.Name != nil {
			name = *u.Name
		}
		out.Items = append(out.Items, FlagEndUser{Variation: describe.VariationName(ev.Variation.ID, fl.Variations),
			KeyID: u.KeyID, Name: name, LastEvaluatedAt: u.UpdatedAt.UTC().Format(time.RFC3339)})
	}
	return out, nil
}
