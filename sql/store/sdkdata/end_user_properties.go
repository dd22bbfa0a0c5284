package sdkdata

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// EndUserPresetValue is a value people may pick for a property.
type EndUserPresetValue struct {
	ID          string `json:"id"`
	Value       string `json:"value"`
	Description string `json:"description"`
}

// EndUserProperty is a property name seen on an environment's end users, or
// added by people (FeatBit's EndUserProperty). keyId and name are built in:
// every environment has them, and they cannot be changed or removed.
type EndUserProperty struct {
	ID                  uuid.UUID            `json:"id"`
	EnvID               uuid.UUID            `json:"envId"`
	Name                string               `json:"name"`
	PresetValues        []EndUserPresetValue `json:"presetValues"`
	UsePresetValuesOnly bool                 `json:"usePresetValuesOnly"`
	IsBuiltIn           bool                 `json:"isBuiltIn"`
	IsDigestField       bool                 `json:"isDigestField"`
	Remark              string               `json:"remark"`
	CreatedAt           time.Time            `json:"createdAt"`
	UpdatedAt           time.Time            `json:"updatedAt"`
}

// builtInProperties are FeatBit's built-in end-user properties, with the
// ids Bunting gives them: derived from the environment, so they are stable.
func builtInProperties(env core.EnvRow) []EndUserProperty {
	at := env.Environment.CreatedAt
	return []EndUserProperty{
		{ID: uuid.NewSHA1(env.Environment.ID, []byte("keyId")), EnvID: env.Environment.ID, Name: "keyId", PresetValues: []EndUserPresetValue{},
			IsBuiltIn: true, IsDigestField: true, Remark: "user identifier in this environment", CreatedAt: at, UpdatedAt: at},
		{ID: uuid.NewSHA1(env.Environment.ID, []byte("name")), EnvID: env.Environment.ID, Name: "name", PresetValues: []EndUserPresetValue{},
			IsBuiltIn: true, CreatedAt: at, UpdatedAt: at},
	}
}

func isBuiltIn(env core.EnvRow, id uuid.UUID) bool {
	for _, p := range builtInProperties(env) {
		if p.ID == id {
			return true
		}
	}
	return false
}

func endUserPropertyFrom(r db.EndUserProperty) EndUserProperty {
	p := EndUserProperty{ID: r.ID, EnvID: r.EnvID, Name: r.Name, UsePresetValuesOnly: r.UsePresetValuesOnly,
		IsDigestField: r.IsDigestField, Remark: r.Remark, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if json.Unmarshal(r.PresetValues, &p.PresetValues) != nil || p.PresetValues == nil {
		p.PresetValues = []EndUserPresetValue{}
	}
	return p
}

// ListEndUserProperties returns an environment's end-user properties: the
// built-in ones, then the others by name.
func (s *SDK) ListEndUserProperties(ctx context.Context, a *core.Actor, envID uuid.UUID) ([]EndUserProperty, error) {
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return nil, err
	}
	rows, err := s.core.Q.ListEndUserProperties(ctx, envID)
	if err != nil {
		return nil, core.Translate(err)
	}
	out := builtInProperties(env)
	for _, r := range rows {
		if r.Name != "keyId" && r.Name != "name" {
			out = append(out, endUserPropertyFrom(r))
		}
	}
	return out, nil
}

// maxSuggestedProperties bounds the names the rule editors suggest.
const maxSuggestedProperties = 500

// EndUserPropertyNames returns the property names the rule editors suggest
// for an environment: the built-in ones and those seen, by name.
func (s *SDK) EndUserPropertyNames(ctx context.Context, a *core.Actor, envID uuid.UUID) ([]string, error) {
	if _, err := s.core.ReadableEnv(ctx, a, envID); err != nil {
		return nil, err
	}
	names, err := s.core.Q.EndUserPropertyNames(ctx, db.EndUserPropertyNamesParams{EnvID: envID, Lim: maxSuggestedProperties})
	if err != nil {
		return nil, core.Translate(err)
	}
	out := []string{"keyId", "name"}
	for _, n := range names {
		if n != "keyId" && n != "name" {
			out = append(out, n)
		}
	}
	return out, nil
}

// UpsertEndUserProperty is FeatBit's body for adding or changing a property.
type UpsertEndUserProperty struct {
	Name                string               `json:"name"`
	PresetValues        []EndUserPresetValue `json:"presetValues"`
	UsePresetValuesOnly bool                 `json:"usePresetValuesOnly"`
	IsDigestField       bool                 `json:"isDigestField"`
	Remark              string               `json:"remark"`
}

// maxPresetValues bounds a property's preset values.
const maxPresetValues = 100

// UpsertEndUserProperty adds the property with the given id or changes it.
// Built-in properties cannot be changed (property_is_builtIn); a name
// another property has is ErrNameUsed.
func (s *SDK) UpsertEndUserProperty(ctx context.Context, a *core.Actor, envID, id uuid.UUID, in UpsertEndUserProperty) (EndUserProperty, error) {
	var v core.Validator
	v.Required("name", in.Name, core.MaxNameLen)
	v.Text("remark", in.Remark, core.MaxDescriptionLen)
	if in.Name == "keyId" || in.Name == "name" {
		v.Add("name", "builtIn")
	}
	if len(in.PresetValues) > maxPresetValues {
		v.Add("presetValues", "invalid")
	}
	for _, pv := range in.PresetValues {
		if !v.Text("presetValues", pv.Value, maxPropertyLen) || !v.Text("presetValues", pv.Description, core.MaxDescriptionLen) ||
			!v.Text("presetValues", pv.ID, core.MaxKeyLen) {
			break
		}
	}
	if err := v.Err(); err != nil {
		return EndUserProperty{}, err
	}
	if id == uuid.Nil {
		return EndUserProperty{}, core.Invalid("propertyId_is_invalid")
	}
	env, err := s.writableEnv(ctx, a, envID)
	if err != nil {
		return EndUserProperty{}, err
	}
	if isBuiltIn(env, id) {
		return EndUserProperty{}, core.Invalid("property_is_builtIn")
	}
	if in.PresetValues == nil {
		in.PresetValues = []EndUserPresetValue{}
	}
	presets, err := json.Marshal(in.PresetValues)
	if err != nil {
		return EndUserProperty{}, err
	}
	var out EndUserProperty
	err = s.core.InTx(ctx, func(q *db.Queries) error {
		before, err := q.GetEndUserProperty(ctx, db.GetEndUserPropertyParams{EnvID: envID, ID: id})
		existed := err == nil
		if err = core.Translate(err); err != nil && err != core.ErrNotFound {
			return err
		}
		row, err := q.UpsertEndUserProperty(ctx, db.UpsertEndUserPropertyParams{ID: id, EnvID: envID, Name: in.Name,
			PresetValues: presets, UsePresetValuesOnly: in.UsePresetValuesOnly, IsDigestField: in.IsDigestField, Remark: in.Remark})
		if err != nil {
			return err // a row of another environment with that id: no row, so ErrNotFound
		}
		out = endUserPropertyFrom(row)
		ch := core.Change{RefType: "EndUserProperty", RefID: id.String(), Keyword: out.Name, Operation: core.OpCreate,
			EnvID: &env.Environment.ID, Current: out}
		if existed {
			ch.Operation, ch.Previous = core.OpUpdate, endUserPropertyFrom(before)
		}
		return s.core.Audit(ctx, q, a, ch)
	})
	return out, err
}

// DeleteEndUserProperty removes a property people added or SDKs reported;
// one SDKs report again comes back.
func (s *SDK) DeleteEndUserProperty(ctx context.Context, a *core.Actor, envID, id uuid.UUID) error {
	env, err := s.writableEnv(ctx, a, envID)
	if err != nil {
		return err
	}
	if isBuiltIn(env, id) {
		return core.Invalid("property_is_builtIn")
	}
	return s.core.InTx(ctx, func(q *db.Queries) error {
		before, err := q.GetEndUserProperty(ctx, db.GetEndUserPropertyParams{EnvID: envID, ID: id})
		if err != nil {
			return err
		}
		if _, err := q.DeleteEndUserProperty(ctx, db.DeleteEndUserPropertyParams{EnvID: envID, ID: id}); err != nil {
			return err
		}
		return s.core.Audit(ctx, q, a, core.Change{RefType: "EndUserProperty", RefID: id.String(), Keyword: before.Name,
			Operation: core.OpRemove, EnvID: &env.Environment.ID, Previous: endUserPropertyFrom(before)})
	})
}
