package flagsascode

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"slices"

	"github.com/google/uuid"
	"go.yaml.in/yaml/v3"

	"github.com/bunting-flags/bunting/sql/db"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/sql/targeting"
)

// Flags as code: an environment's flags and segments as one document that
// reads well in a pull request (YAML or JSON), and back (import.go). The
// document holds what FeatBit's flag and segment models hold, minus what a
// server keeps for itself (revisions, timestamps, creators, the
// environment's id): every part in a stable order (flags and segments by
// key, tags sorted, rules and variations as the flag orders them), the ids
// FeatBit keeps inside a flag (variations, rules, conditions), and segments
// named by key, so a file moves between environments and projects.

// DocumentVersion is the version of the document this server writes and reads.
const DocumentVersion = 1

// Document is one environment's flags and segments. Segments are the
// environment's own (environment-specific) ones; a flag's rule may also
// name a shared segment, by key, which the file does not carry: it is
// managed from its own environment, and an import finds it among the
// segments visible in the target.
type Document struct {
	Version     int          `json:"version" yaml:"version"`
	Project     *DocProject  `json:"project,omitempty" yaml:"project,omitempty"`
	Environment DocEnv       `json:"environment" yaml:"environment"`
	Segments    []DocSegment `json:"segments" yaml:"segments"`
	Flags       []DocFlag    `json:"flags" yaml:"flags"`
}

// ProjectDocument is every environment of a project the caller may read,
// each as a Document without its project.
type ProjectDocument struct {
	Version      int        `json:"version" yaml:"version"`
	Project      DocProject `json:"project" yaml:"project"`
	Environments []Document `json:"environments" yaml:"environments"`
}

// DocProject names the project a document was exported from.
type DocProject struct {
	Key  string `json:"key" yaml:"key"`
	Name string `json:"name" yaml:"name"`
}

// DocEnv names the environment a document was exported from; an import
// may apply it to any environment.
type DocEnv struct {
	Key  string `json:"key" yaml:"key"`
	Name string `json:"name,omitempty" yaml:"name,omitempty"`
}

// DocSubject is what names a flag or a segment of a document, first in
// each. ID is its id where it was exported, for the reader: an import
// matches flags and segments by key, and one it creates gets an id of its
// own (ids are unique across environments).
type DocSubject struct {
	Key         string   `json:"key" yaml:"key"`
	ID          string   `json:"id,omitempty" yaml:"id,omitempty"`
	Name        string   `json:"name" yaml:"name"`
	Description string   `json:"description,omitempty" yaml:"description,omitempty"`
	Tags        []string `json:"tags,omitempty" yaml:"tags,omitempty"`
}

// docSubject names an exported flag or segment; its tags are sorted, so an
// export does not change with the order they were added in.
func docSubject(key string, id uuid.UUID, name, description string, tags []string) DocSubject {
	return DocSubject{Key: key, ID: id.String(), Name: name, Description: description, Tags: sortedTags(tags)}
}

// DocFlag is a flag as FeatBit models it (FeatureFlag.cs), minus revision,
// timestamps and creators.
type DocFlag struct {
	DocSubject          `yaml:",inline"`
	IsEnabled           bool            `json:"isEnabled" yaml:"isEnabled"`
	IsArchived          bool            `json:"isArchived,omitempty" yaml:"isArchived,omitempty"`
	VariationType       string          `json:"variationType" yaml:"variationType"`
	Variations          []DocVariation  `json:"variations" yaml:"variations"`
	DisabledVariationID string          `json:"disabledVariationId" yaml:"disabledVariationId"`
	TargetUsers         []DocTargetUser `json:"targetUsers,omitempty" yaml:"targetUsers,omitempty"`
	Rules               []DocRule       `json:"rules,omitempty" yaml:"rules,omitempty"`
	Fallthrough         DocFallthrough  `json:"fallthrough" yaml:"fallthrough"`
	ExptIncludeAll      *bool           `json:"exptIncludeAllTargets,omitempty" yaml:"exptIncludeAllTargets,omitempty"`
}

// DocVariation is a value a flag serves.
type DocVariation struct {
	ID    string `json:"id" yaml:"id"`
	Name  string `json:"name" yaml:"name"`
	Value string `json:"value" yaml:"value"`
}

// DocTargetUser serves a variation to listed end users.
type DocTargetUser struct {
	VariationID string   `json:"variationId" yaml:"variationId"`
	KeyIDs      []string `json:"keyIds" yaml:"keyIds"`
}

// DocRule is a targeting rule of a flag.
type DocRule struct {
	ID             string         `json:"id" yaml:"id"`
	Name           string         `json:"name,omitempty" yaml:"name,omitempty"`
	DispatchKey    *string        `json:"dispatchKey,omitempty" yaml:"dispatchKey,omitempty"`
	IncludedInExpt bool           `json:"includedInExpt,omitempty" yaml:"includedInExpt,omitempty"`
	Conditions     []DocCondition `json:"conditions" yaml:"conditions"`
	Variations     []DocRollout   `json:"variations" yaml:"variations"`
}

// DocCondition tests a property of an end user. A segment condition names
// its segments by key in Segments and has no Value.
type DocCondition struct {
	ID       string   `json:"id" yaml:"id"`
	Property string   `json:"property" yaml:"property"`
	Op       string   `json:"op,omitempty" yaml:"op,omitempty"`
	Value    string   `json:"value,omitempty" yaml:"value,omitempty"`
	Segments []string `json:"segments,omitempty" yaml:"segments,omitempty"`
}

// DocRollout serves a variation to the users whose bucket falls in Rollout.
type DocRollout struct {
	ID          string    `json:"id" yaml:"id"`
	Rollout     []float64 `json:"rollout" yaml:"rollout,flow"`
	ExptRollout float64   `json:"exptRollout,omitempty" yaml:"exptRollout,omitempty"`
}

// DocFallthrough is the default rule.
type DocFallthrough struct {
	DispatchKey    *string      `json:"dispatchKey,omitempty" yaml:"dispatchKey,omitempty"`
	IncludedInExpt bool         `json:"includedInExpt,omitempty" yaml:"includedInExpt,omitempty"`
	Variations     []DocRollout `json:"variations" yaml:"variations"`
}

// DocSegment is an environment-specific segment as FeatBit models it
// (Segment.cs), minus timestamps and the ids of its workspace and
// environment.
type DocSegment struct {
	DocSubject `yaml:",inline"`
	IsArchived bool             `json:"isArchived,omitempty" yaml:"isArchived,omitempty"`
	Included   []string         `json:"included,omitempty" yaml:"included,omitempty"`
	Excluded   []string         `json:"excluded,omitempty" yaml:"excluded,omitempty"`
	Rules      []DocSegmentRule `json:"rules,omitempty" yaml:"rules,omitempty"`
}

// DocSegmentRule matches the users meeting all its conditions.
type DocSegmentRule struct {
	ID         string         `json:"id" yaml:"id"`
	Name       string         `json:"name,omitempty" yaml:"name,omitempty"`
	Conditions []DocCondition `json:"conditions" yaml:"conditions"`
}

// ExportEnv writes an environment's flags (archived ones too) and its own
// segments as a Document. It needs CanAccessEnv, as reading each does.
func (s *FlagsAsCode) ExportEnv(ctx context.Context, a *core.Actor, envID uuid.UUID) (Document, error) {
	env, err := s.core.ReadableEnv(ctx, a, envID)
	if err != nil {
		return Document{}, err
	}
	doc, err := s.exportEnv(ctx, env)
	if err != nil {
		return Document{}, err
	}
	doc.Version, doc.Project = DocumentVersion, &DocProject{Key: env.ProjectKey, Name: env.ProjectName}
	return doc, nil
}

// ExportProject writes every environment of a project that the caller may
// read, in the project's order.
func (s *FlagsAsCode) ExportProject(ctx context.Context, a *core.Actor, projectID uuid.UUID) (ProjectDocument, error) {
	p, err := s.core.GetProject(ctx, a, projectID)
	if err != nil {
		return ProjectDocument{}, err
	}
	out := ProjectDocument{Version: DocumentVersion, Project: DocProject{Key: p.Key, Name: p.Name}, Environments: []Document{}}
	for _, e := range p.Environments {
		env, err := s.core.ReadableEnv(ctx, a, e.ID)
		if err != nil {
			return ProjectDocument{}, err
		}
		doc, err := s.exportEnv(ctx, env)
		if err != nil {
			return ProjectDocument{}, err
		}
		// Each with its version, so it imports as it is, cut out of the file.
		doc.Version = DocumentVersion
		out.Environments = append(out.Environments, doc)
	}
	return out, nil
}

func (s *FlagsAsCode) exportEnv(ctx context.Context, env core.EnvRow) (Document, error) {
	flagRows, err := s.core.Q.ListEnvFlags(ctx, env.Environment.ID)
	if err != nil {
		return Document{}, core.Translate(err)
	}
	segRows, err := s.core.Q.ListEnvSegments(ctx, db.ListEnvSegmentsParams{OrganizationID: env.OrganizationID,
		EnvID: env.Environment.ID, Scopes: flagstore.EnvScopes(env)})
	if err != nil {
		return Document{}, core.Translate(err)
	}
	segs, err := segments.SegmentsFrom(segRows)
	if err != nil {
		return Document{}, err
	}
	keys := map[string]string{}
	for _, sg := range segs {
		keys[sg.ID.String()] = sg.Key
	}
	// A segment deleted since a rule named it is named by its id: an
	// import refuses it, as it refuses any segment it cannot find.
	keyOf := func(id string) string { return cmp.Or(keys[id], id) }
	doc := Document{Environment: DocEnv{Key: env.Environment.Key, Name: env.Environment.Name}, Segments: []DocSegment{}, Flags: []DocFlag{}}
	for _, sg := range segs {
		if sg.Type == flagstore.SegmentEnvironmentSpecific {
			doc.Segments = append(doc.Segments, docSegment(sg))
		}
	}
	for _, r := range flagRows {
		f, err := flagstore.FlagFrom(r)
		if err != nil {
			return Document{}, err
		}
		doc.Flags = append(doc.Flags, docFlag(f, keyOf))
	}
	slices.SortFunc(doc.Segments, func(x, y DocSegment) int { return cmp.Compare(x.Key, y.Key) })
	slices.SortFunc(doc.Flags, func(x, y DocFlag) int { return cmp.Compare(x.Key, y.Key) })
	return doc, nil
}

func docFlag(f flagstore.Flag, keyOf func(string) string) DocFlag {
	include := f.ExptIncludeAllTargets
	d := DocFlag{DocSubject: docSubject(f.Key, f.ID, f.Name, f.Description, f.Tags),
		IsEnabled: f.IsEnabled, IsArchived: f.IsArchived, VariationType: f.VariationType,
		DisabledVariationID: f.DisabledVariationID, ExptIncludeAll: &include,
		Fallthrough: DocFallthrough{DispatchKey: f.Fallthrough.DispatchKey, IncludedInExpt: f.Fallthrough.IncludedInExpt,
			Variations: docRollouts(f.Fallthrough.Variations)}}
	for _, v := range f.Variations {
		d.Variations = append(d.Variations, DocVariation(v))
	}
	// Every entry, empty ones too, so importing a file exported from the
	// same environment changes nothing.
	for _, t := range f.TargetUsers {
		d.TargetUsers = append(d.TargetUsers, DocTargetUser{VariationID: t.VariationID, KeyIDs: core.OrEmpty(slices.Clone(t.KeyIDs))})
	}
	for _, r := range f.Rules {
		d.Rules = append(d.Rules, DocRule{ID: r.ID, Name: r.Name, DispatchKey: r.DispatchKey, IncludedInExpt: r.IncludedInExpt,
			Conditions: docConditions(r.Conditions, keyOf), Variations: docRollouts(r.Variations)})
	}
	return d
}

func docRollouts(rv []flagstore.RolloutVariation) []DocRollout {
	out := make([]DocRollout, len(rv))
	for i, r := range rv {
		out[i] = DocRollout{ID: r.ID, Rollout: slices.Clone(r.Rollout), ExptRollout: r.ExptRollout}
	}
	return out
}

func docConditions(cs []flagstore.Condition, keyOf func(string) string) []DocCondition {
	out := make([]DocCondition, len(cs))
	for i, c := range cs {
		d := DocCondition{ID: c.ID, Property: c.Property, Op: c.Op, Value: c.Value}
		if keyOf != nil && (c.Property == targeting.SegmentIn || c.Property == targeting.SegmentNotIn) {
			var ids []string
			if json.Unmarshal([]byte(c.Value), &ids) == nil {
				d.Value, d.Segments = "", []string{}
				for _, id := range ids {
					d.Segments = append(d.Segments, keyOf(id))
				}
			}
		}
		out[i] = d
	}
	return out
}

func docSegment(sg flagstore.Segment) DocSegment {
	d := DocSegment{DocSubject: docSubject(sg.Key, sg.ID, sg.Name, sg.Description, sg.Tags),
		IsArchived: sg.IsArchived, Included: slices.Clone(sg.Included), Excluded: slices.Clone(sg.Excluded)}
	for _, r := range sg.Rules {
		d.Rules = append(d.Rules, DocSegmentRule{ID: r.ID, Name: r.Name, Conditions: docConditions(r.Conditions, nil)})
	}
	return d
}

func sortedTags(tags []string) []string {
	if len(tags) == 0 {
		return nil
	}
	out := slices.Clone(tags)
	slices.Sort(out)
	return out
}

// Document formats.
const (
	FormatYAML = "yaml"
	FormatJSON = "json"
)

// EncodeDocument writes a Document or ProjectDocument as YAML (two-space
// indents, fields in the document's order, empty optional parts left out)
// or as indented JSON.
func EncodeDocument(doc any, format string) ([]byte, error) {
	var buf bytes.Buffer
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return nil, err
		}
	case FormatYAML:
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(doc); err != nil {
			return nil, err
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
	default:
		return nil, core.Invalid("format_is_invalid")
	}
	return buf.Bytes(), nil
}
