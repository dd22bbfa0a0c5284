package flagsascode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"go.yaml.in/yaml/v3"

	"github.com/bunting-flags/bunting/sql/jsonbody"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
)

// Reading and checking an imported file (import.go), before anything is
// written: decoding it strictly, turning it into the flags and segments it
// would store, and checking them as changes made by hand are checked.

// DecodeDocument reads a Document as YAML or JSON (format FormatYAML or
// FormatJSON), refusing fields the document does not have, so a misspelt
// one is named rather than silently dropped.
func DecodeDocument(body []byte, format string) (Document, error) {
	var doc Document
	var err error
	switch format {
	case FormatJSON:
		// jsonbody refuses a member named twice (encoding/json keeps the
		// last) and bounds what decoding allocates, as for every other
		// body; the second pass names a field the document does not have.
		if err = jsonbody.Decode(body, &doc); err == nil {
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.DisallowUnknownFields()
			err = dec.Decode(&Document{})
		}
	case FormatYAML:
		if err = decodeYAML(body, &doc); errors.Is(err, errTooManyItems) {
			return Document{}, tooManyItems()
		}
	default:
		return Document{}, core.Invalid("format_is_invalid")
	}
	if err != nil {
		return Document{}, &core.ValidationError{Codes: []string{"body_is_invalid"},
			Details: []core.FieldProblem{{Path: "body", Code: "body_is_invalid", Message: decodeMessage(err)}}}
	}
	return doc, nil
}

// YAMLFactor bounds what decoding a YAML document holds at once, per byte
// of it: yaml.v3 builds a node of about 250 bytes for every value before it
// decodes any, and a file of one-letter values has one every two bytes
// (`[a,a,…]`: 120 times its size, and what they decode into); an export of
// 2,000 flags takes about 25 times its size. Decoding is two such passes,
// one after the other (decodeYAML). The API reserves it from the body
// budget, and so takes YAML of at most api.MaxYAMLImportBytes: JSON, priced
// value by value as it is walked (jsonbody), is the format for larger files.
const YAMLFactor = 144

// decodeYAML decodes a YAML document into doc, refusing a field the
// document does not have. It counts the flags and segments in the file's
// nodes first: decoding makes a whole DocFlag of every item, so a file of
// thousands of empty ones (`flags: [{},{},…]`) would cost many times its
// nodes before the count in checkDocument could refuse it.
func decodeYAML(body []byte, doc *Document) error {
	var root yaml.Node
	if err := yaml.Unmarshal(body, &root); err != nil {
		return err
	}
	if yamlItems(&root) > MaxImportItems {
		return errTooManyItems
	}
	dec := yaml.NewDecoder(bytes.NewReader(body))
	dec.KnownFields(true)
	return dec.Decode(doc)
}

var errTooManyItems = errors.New("too many flags and segments")

// yamlItems counts the items of a document's flags and segments, as
// decoding would find them: through aliases and merged mappings, each
// mapping once (an anchor may be merged into itself, which decoding
// refuses).
func yamlItems(root *yaml.Node) int {
	seen := map[*yaml.Node]bool{}
	var count func(n *yaml.Node) int
	count = func(n *yaml.Node) int {
		for n.Kind == yaml.AliasNode || n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
			if n.Kind == yaml.AliasNode {
				n = n.Alias
			} else {
				n = n.Content[0]
			}
		}
		if seen[n] {
			return 0
		}
		seen[n] = true
		items := 0
		switch n.Kind {
		case yaml.SequenceNode: // merged mappings
			for _, m := range n.Content {
				items += count(m)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				value := n.Content[i+1]
				for value.Kind == yaml.AliasNode {
					value = value.Alias
				}
				switch n.Content[i].Value {
				case "flags", "segments":
					items += len(value.Content)
				case "<<":
					items += count(value)
				}
			}
		}
		return items
	}
	return count(root)
}

// tooManyItems refuses a file of more than MaxImportItems flags and
// segments.
func tooManyItems() error {
	var v core.Validator
	v.At("document", "invalid", "flags", fmt.Sprintf("at most %d flags and segments in one file", MaxImportItems))
	return v.Err()
}

// decodeMessage says why a file could not be read, in the decoder's words
// about the file (a line, a field), never more than a line of it.
func decodeMessage(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return msg
}

// checkDocument checks the whole file before anything is written: its
// version, unique keys, and each segment and flag with the validators a
// change made by hand meets, every problem with its path in the file.
func (s *FlagsAsCode) checkDocument(env core.EnvRow, in ImportInput, visible []flagstore.Segment) error {
	doc := in.Document
	var all core.ValidationError
	add := func(prefix string, err error) {
		var verr *core.ValidationError
		if !errors.As(at(prefix, err), &verr) {
			return
		}
		for _, d := range verr.Details {
			all.Details = append(all.Details, d)
			if !slices.Contains(all.Codes, d.Code) {
				all.Codes = append(all.Codes, d.Code)
			}
		}
	}
	var v core.Validator
	if doc.Version != DocumentVersion {
		v.At("version", "invalid", "version", fmt.Sprintf("this server reads version %d", DocumentVersion))
	}
	if len(doc.Flags)+len(doc.Segments) > MaxImportItems {
		add("", tooManyItems())
	}
	flagstore.Change{Comment: in.Comment}.Check(&v, env)
	add("", v.Err())
	// A segment of the file is known by its key; one not yet in the
	// environment gets a stand-in id until it is created.
	ids := map[string]uuid.UUID{}
	for _, sg := range visible {
		ids[sg.Key] = sg.ID
	}
	seen := map[string]bool{}
	for i, d := range doc.Segments {
		prefix := fmt.Sprintf("segments[%d].", i)
		if seen[strings.ToLower(d.Key)] {
			add("", duplicateKey(prefix))
		}
		seen[strings.ToLower(d.Key)] = true
		if _, ok := ids[d.Key]; !ok {
			ids[d.Key] = uuid.New()
		}
		sg := segmentFromDoc(d, env)
		var v core.Validator
		segments.CheckSegment(&v, &sg, env)
		add(prefix, v.Err())
	}
	seen = map[string]bool{}
	for i, d := range doc.Flags {
		prefix := fmt.Sprintf("flags[%d].", i)
		if seen[strings.ToLower(d.Key)] {
			add("", duplicateKey(prefix))
		}
		seen[strings.ToLower(d.Key)] = true
		f, err := flagFromDoc(d, ids)
		add(prefix, err)
		var v core.Validator
		flagstore.CheckFlag(&v, &f)
		add(prefix, v.Err())
	}
	if len(all.Details) > 0 {
		return &all
	}
	return nil
}

func duplicateKey(prefix string) error {
	return &core.ValidationError{Codes: []string{"key_is_invalid"}, Details: []core.FieldProblem{{Path: prefix + "key",
		Code: "key_is_invalid", Message: "the file names this key twice"}}}
}

// segmentFromDoc is a segment of the file as it would be stored, managed
// from env.
func segmentFromDoc(d DocSegment, env core.EnvRow) flagstore.Segment {
	sg := flagstore.Segment{WorkspaceID: env.WorkspaceID, EnvID: env.Environment.ID, Key: d.Key, Name: strings.TrimSpace(d.Name),
		Type: flagstore.SegmentEnvironmentSpecific, IsEnvironmentSpecific: true,
		Scopes:      []string{flagstore.Scope(env.OrganizationKey, env.ProjectKey, env.Environment.Key)},
		Description: d.Description, Included: core.OrEmpty(d.Included), Excluded: core.OrEmpty(d.Excluded),
		Tags: core.OrEmpty(sortedTags(d.Tags)), IsArchived: d.IsArchived, Rules: []flagstore.SegmentRule{}}
	for _, r := range d.Rules {
		sg.Rules = append(sg.Rules, flagstore.SegmentRule{ID: r.ID, Name: r.Name, Conditions: conditionsFromDoc(r.Conditions, nil, nil, "")})
	}
	return sg
}

// flagFromDoc is a flag of the file as it would be stored, its segment
// conditions naming segments by id (ids, by key); an unknown key is a
// problem at its path.
func flagFromDoc(d DocFlag, ids map[string]uuid.UUID) (flagstore.Flag, error) {
	f := flagstore.Flag{Key: d.Key, Name: strings.TrimSpace(d.Name), Description: d.Description, Tags: core.OrEmpty(sortedTags(d.Tags)),
		IsEnabled: d.IsEnabled, IsArchived: d.IsArchived, VariationType: d.VariationType, Variations: []flagstore.Variation{},
		DisabledVariationID: d.DisabledVariationID, TargetUsers: []flagstore.TargetUser{}, Rules: []flagstore.FlagRule{},
		ExptIncludeAllTargets: d.ExptIncludeAll == nil || *d.ExptIncludeAll,
		Fallthrough: flagstore.Fallthrough{DispatchKey: d.Fallthrough.DispatchKey, IncludedInExpt: d.Fallthrough.IncludedInExpt,
			Variations: rolloutsFromDoc(d.Fallthrough.Variations)}}
	for _, v := range d.Variations {
		f.Variations = append(f.Variations, flagstore.Variation(v))
	}
	for _, t := range d.TargetUsers {
		f.TargetUsers = append(f.TargetUsers, flagstore.TargetUser{VariationID: t.VariationID, KeyIDs: core.OrEmpty(t.KeyIDs)})
	}
	var missing core.Validator
	for j, r := range d.Rules {
		f.Rules = append(f.Rules, flagstore.FlagRule{ID: r.ID, Name: r.Name, DispatchKey: r.DispatchKey, IncludedInExpt: r.IncludedInExpt,
			Conditions: conditionsFromDoc(r.Conditions, ids, &missing, fmt.Sprintf("rules[%d]", j)),
			Variations: rolloutsFromDoc(r.Variations)})
	}
	return f, missing.Err()
}

func rolloutsFromDoc(rv []DocRollout) []flagstore.RolloutVariation {
	out := make([]flagstore.RolloutVariation, len(rv))
	for i, r := range rv {
		out[i] = flagstore.RolloutVariation{ID: r.ID, Rollout: core.OrEmpty(r.Rollout), ExptRollout: r.ExptRollout}
	}
	return out
}

// conditionsFromDoc turns the file's conditions into stored ones: a
// segment condition's keys become the JSON array of ids the store keeps.
// With ids nil (a segment's own rules, which may not name segments), the
// keys are kept as they are, for the validator to refuse.
func conditionsFromDoc(cs []DocCondition, ids map[string]uuid.UUID, missing *core.Validator, at string) []flagstore.Condition {
	out := make([]flagstore.Condition, len(cs))
	for k, c := range cs {
		out[k] = flagstore.Condition{ID: c.ID, Property: c.Property, Op: c.Op, Value: c.Value}
		if c.Segments == nil {
			continue
		}
		named := []string{}
		for n, key := range c.Segments {
			id, ok := ids[key]
			switch {
			case ids == nil:
				named = append(named, key)
			case !ok:
				missing.At("segments", "invalid", fmt.Sprintf("%s.conditions[%d].segments[%d]", at, k, n),
					fmt.Sprintf("no segment %s in the file or visible in the environment", key))
				// A stand-in, so the flag's own check names nothing more here.
				named = append(named, uuid.NewString())
			default:
				named = append(named, id.String())
			}
		}
		value, _ := json.Marshal(named)
		out[k].Value = string(value)
	}
	return out
}
