package flagstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/access"
	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// FlagFilter selects a page of an environment's flags.
type FlagFilter struct {
	// Name matches part of the name or key, case-insensitively.
	Name string
	// Tags must all be on a flag.
	Tags       []string
	IsEnabled  *bool
	IsArchived bool
	// SortBy is one of SortKeys (FeatBit's "created_at" and "updated_at"
	// too); empty is "createdAt".
	SortBy string
	// Order is "asc" or "desc"; empty is the sort key's own (SortKeys).
	Order string
	Page  core.Page
	// Stage keeps the flags at one stage (a Stage), or ReadyToRemoveFilter
	// those ReadyToRemove; empty for all. A stage is read from what the
	// list shows of each flag, so a filtered list reads the matches of the
	// other filters whole (see listByStage).
	Stage string
	// Now is when stages are read at; the zero time is the present.
	Now time.Time

	descending bool // read from Order by checkSort
}

// ReadyToRemoveFilter is FlagFilter.Stage for the flags ReadyToRemove:
// launched, unused, or archived and not evaluated since.
const ReadyToRemoveFilter = "ready"

// SortKeys are the orders a flag list takes, each with its own direction:
// names and keys A to Z, times newest first. Flags never evaluated count as
// evaluated longest ago.
var SortKeys = []struct {
	Key        string
	Descending bool
}{{"name", false}, {"key", false}, {"createdAt", true}, {"updatedAt", true}, {"lastEvaluatedAt", true}}

// checkSort checks a filter's order against SortKeys and reads its direction.
func (f *FlagFilter) checkSort(v *core.Validator) (descending bool) {
	switch f.SortBy {
	case "", "created_at":
		f.SortBy = "createdAt"
	case "updated_at":
		f.SortBy = "updatedAt"
	}
	known := false
	for _, k := range SortKeys {
		if k.Key == f.SortBy {
			known, descending = true, k.Descending
		}
	}
	if !known {
		v.Add("sortBy", "invalid")
	}
	switch f.Order {
	case "":
	case "asc", "desc":
		descending = f.Order == "desc"
	default:
		v.Add("sortOrder", "invalid")
	}
	return descending
}

// FlagListItem is a flag as lists show it: FeatBit's FeatureFlagVm and more.
type FlagListItem struct {
	ID            uuid.UUID   `json:"id"`
	Name          string      `json:"name"`
	Key           string      `json:"key"`
	Description   string      `json:"description"`
	VariationType string      `json:"variationType"`
	Variations    []Variation `json:"variations"`
	// Creator is who created the flag; nil when they no longer exist.
	Creator    *Person  `json:"creator"`
	IsEnabled  bool     `json:"isEnabled"`
	IsArchived bool     `json:"isArchived"`
	Tags       []string `json:"tags"`
	Serves     Serves   `json:"serves"`
	// Serving is what the admin list shows of its targeting, shares and
	// all; FeatBit's list has no such field.
	Serving    Serving     `json:"-"`
	Revision   uuid.UUID   `json:"revision"`
	CreatedAt  time.Time   `json:"createdAt"`
	UpdatedAt  time.Time   `json:"updatedAt"`
	LastChange *LastChange `json:"lastChange"`
	// LastEvaluatedAt is when SDKs last reported evaluating the flag; nil
	// when they never did. Evaluations counts their reports in all.
	LastEvaluatedAt *time.Time `json:"lastEvaluatedAt"`
	Evaluations     int64      `json:"evaluations"`
	// Stage is where the flag is in its life (StageOf), and ReadyToRemove
	// whether it can come out of the code; FeatBit's list has neither.
	Stage         Stage `json:"stage"`
	ReadyToRemove bool  `json:"-"`
}

// LastChange is a flag's most recent change: FeatBit's LastChangeVm
// (operator, happenedAt, comment), plus changedAt and changedBy.
type LastChange struct {
	Operator   Person    `json:"operator"`
	HappenedAt time.Time `json:"happenedAt"`
	Comment    string    `json:"comment"`
	ChangedAt  time.Time `json:"changedAt"`
	ChangedBy  uuid.UUID `json:"changedBy"`
}

// Person names a user, an access token or a flag trigger, as FeatBit's
// UserVm; an access token's email is "Access token", a trigger's "Trigger"
// (the people table, sql/migrations/0036_people.sql).
type Person struct {
	ID    uuid.UUID `json:"id"`
	Name  string    `json:"name"`
	Email string    `json:"email"`
}

// Ghost stands for whoever made a change and no longer exists, as FeatBit says.
var Ghost = Person{Name: "Ghost", Email: "Ghost"}

// MaxExactFlagCount is how many matches a flag list counts exactly; past
// it the count stops and the page says its total is an estimate (a lower
// bound), so a list costs the same at a million flags as at ten thousand.
const MaxExactFlagCount = 10_000

// ListFlags pages an environment's flags in two statements, each on an
// index: the environment's keys (for the permission check) with the count
// of matches, then the page with each flag's last change, the names of its
// creator and last changer, and its evaluation summary. A search by name
// takes two as well, its matches and then the page with the environment's
// keys, and a third only when it matches more than a list counts (see
// flagPage and flagSearch).
func (s *Flags) ListFlags(ctx context.Context, a *core.Actor, envID uuid.UUID, f FlagFilter) (core.Paged[FlagListItem], error) {
	var v core.Validator
	f.Page.Check(&v)
	v.Text("name", f.Name, core.MaxNameLen)
	f.descending = f.checkSort(&v)
	if f.Stage != "" && f.Stage != ReadyToRemoveFilter && !slices.Contains(Stages, Stage(f.Stage)) {
		v.Add("stage", "invalid")
	}
	if f.Now.IsZero() {
		f.Now = time.Now()
	}
	if f.Tags == nil {
		f.Tags = []string{}
	}
	if err := v.Err(); err != nil {
		return core.Paged[FlagListItem]{}, err
	}
	if f.Stage != "" {
		return s.listByStage(ctx, a, envID, f)
	}
	orgID, err := a.Org()
	if err != nil {
		return core.Paged[FlagListItem]{}, err
	}
	env, rows, err := s.flagPage(ctx, a, orgID, envID, f)
	if err != nil {
		return core.Paged[FlagListItem]{}, core.Translate(err)
	}
	if err := a.Require(access.CanAccessEnv, core.EnvRN(env.ProjectKey, env.EnvKey)); err != nil {
		return core.Paged[FlagListItem]{}, err
	}
	out := core.Paged[FlagListItem]{TotalCount: env.Total, Items: make([]FlagListItem, len(rows))}
	if env.Total > MaxExactFlagCount {
		out.TotalCount, out.TotalCountIsEstimate = MaxExactFlagCount, true
	}
	for i, r := range rows {
		parts, err := s.listedFlag(r)
		if err != nil {
			return core.Paged[FlagListItem]{}, err
		}
		item := FlagListItem{ID: r.ID, Name: r.Name, Key: r.Key, Description: r.Description, VariationType: r.VariationType,
			Variations: parts.variations, IsEnabled: r.IsEnabled, IsArchived: r.IsArchived, Tags: core.OrEmpty(r.Tags), Serves: parts.serves,
			Serving: parts.serving, Revision: r.Revision, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
		if r.CreatorFound {
			item.Creator = &Person{ID: r.CreatorID, Name: r.CreatorName, Email: r.CreatorEmail}
		}
		if r.Changed {
			operator := Ghost
			if r.ChangerFound {
				operator = Person{ID: r.ChangedBy, Name: r.ChangerName, Email: r.ChangerEmail}
			}
			at := r.ChangedAt.UTC()
			item.LastChange = &LastChange{Operator: operator, HappenedAt: at, Comment: r.ChangeComment, ChangedAt: at, ChangedBy: r.ChangedBy}
		}
		if r.Evaluated {
			at := r.LastEvaluatedAt.UTC()
			item.LastEvaluatedAt, item.Evaluations = &at, r.Evaluations
		}
		facts := item.StageFacts()
		item.Stage = StageOf(facts, f.Now)
		item.ReadyToRemove = ReadyToRemove(item.Stage, facts)
		out.Items[i] = item
	}
	return out, nil
}

// flagPage reads a list's page, with the environment's keys for the
// permission check, which the caller makes before answering anything: a list
// has them from its first statement, a search from its page (FlagListItems,
// or FlagSearchItems, which is the whole search in a small table),
// or, when it found nothing to show, from the environment itself.
func (s *Flags) flagPage(ctx context.Context, a *core.Actor, orgID, envID uuid.UUID, f FlagFilter) (db.FlagListByCreatedRow, []db.FlagListItemsRow, error) {
	var (
		env   db.FlagListByCreatedRow
		rows  []db.FlagListItemsRow
		found bool
		err   error
	)
	if f.Name != "" {
		env, rows, found, err = s.searchPage(ctx, orgID, envID, f)
	}
	if !found && err == nil {
		env, err = s.flagList(ctx, orgID, envID, f)
	}
	if err != nil {
		return env, nil, err
	}
	if !found && len(env.Ids) > 0 {
		rows, err = s.core.Q.FlagListItems(ctx, db.FlagListItemsParams{Ids: env.Ids, EnvID: envID, OrganizationID: orgID})
		if err != nil {
			return env, nil, err
		}
	}
	if env.ProjectKey != "" {
		return env, rows, nil
	}
	if len(rows) > 0 {
		env.ProjectKey, env.EnvKey = rows[0].ProjectKey, rows[0].EnvKey
		return env, rows, nil
	}
	named, err := s.core.EnvironmentOf(ctx, a, envID)
	env.ProjectKey, env.EnvKey = named.ProjectKey, named.Environment.Key
	return env, nil, err
}

// flagList runs the first statement of a list: the environment's keys, the
// count and the page's ids, by the query whose index serves the filter and
// the order, where one does (newest first, by key); other orders sort the
// matches (FlagListSorted).
func (s *Flags) flagList(ctx context.Context, orgID, envID uuid.UUID, f FlagFilter) (db.FlagListByCreatedRow, error) {
	list := db.FlagListByCreatedParams{OrganizationID: orgID, EnvID: envID, IsArchived: f.IsArchived, Tags: f.Tags,
		IsEnabled: f.IsEnabled, CountLimit: MaxExactFlagCount + 1, PageSize: f.Page.Limit(), PageOffset: f.Page.Offset()}
	switch {
	case f.Name != "":
		return s.flagSearch(ctx, envID, f, list)
	case f.SortBy == "key" && !f.descending:
		row, err := s.core.Q.FlagListByKey(ctx, db.FlagListByKeyParams(list))
		return db.FlagListByCreatedRow(row), err
	case f.SortBy == "createdAt" && f.descending:
		return s.core.Q.FlagListByCreated(ctx, list)
	}
	row, err := s.core.Q.FlagListSorted(ctx, db.FlagListSortedParams{IsArchived: list.IsArchived, Tags: list.Tags, IsEnabled: list.IsEnabled,
		CountLimit: list.CountLimit, SortBy: f.SortBy, Descending: f.descending, PageOffset: list.PageOffset, PageSize: list.PageSize,
		OrganizationID: orgID, EnvID: envID})
	return db.FlagListByCreatedRow(row), err
}

// flagSearch is flagList for a search by part of the name or key, but for
// the environment's keys, which its page names (flagPage). The search's
// statement is planned with its pattern on every call, so it is kept to one
// scan (FlagSearch) whose matches are paged here. Only a search matching more
// than a list counts asks for its page apart.
func (s *Flags) flagSearch(ctx context.Context, envID uuid.UUID, f FlagFilter, list db.FlagListByCreatedParams) (db.FlagListByCreatedRow, error) {
	search := db.FlagSearchParams{EnvID: envID, IsArchived: f.IsArchived, Pattern: "%" + core.EscapeLike(strings.ToLower(f.Name)) + "%",
		Tags: f.Tags, IsEnabled: f.IsEnabled, CountLimit: list.CountLimit, SortBy: f.SortBy, Descending: f.descending}
	found, err := s.core.Q.FlagSearch(ctx, search)
	if err != nil {
		return db.FlagListByCreatedRow{}, err
	}
	out := db.FlagListByCreatedRow{Total: int64(len(found))}
	if len(found) < int(list.CountLimit) {
		from := min(len(found), int(list.PageOffset))
		out.Ids = found[from:min(len(found), from+int(list.PageSize))]
		return out, nil
	}
	out.Ids, err = s.core.Q.FlagSearchPage(ctx, db.FlagSearchPageParams{EnvID: envID, IsArchived: search.IsArchived, Pattern: search.Pattern,
		Tags: search.Tags, IsEnabled: search.IsEnabled, SortBy: search.SortBy, Descending: search.Descending, PageOffset: list.PageOffset, PageSize: list.PageSize})
	return out, err
}
