package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A fixture is a walk's requests as FeatBit's UI sent them, replayed in
// order against a fresh Bunting by TestFeatBitUIFixtures (make test), so CI
// keeps the UI's wire shapes working without FeatBit's source. Values the
// server made (ids, tokens) are named where an answer gave them (capture)
// and written {{name}} where a later request or expectation uses them.
type fixture struct {
	Commit   string           `json:"featbitCommit"`
	Note     string           `json:"note"`
	Requests []fixtureRequest `json:"requests"`
}

type fixtureRequest struct {
	Step   string          `json:"step"`
	As     string          `json:"as,omitempty"` // "reviewer" for the second member; the owner otherwise
	Method string          `json:"method"`
	Path   string          `json:"path"` // with its query, as sent
	Body   json.RawMessage `json:"body,omitempty"`
	Status int             `json:"status"`
	// Capture names values of the answer (name: dotted path) for later requests.
	Capture map[string]string `json:"capture,omitempty"`
	// Expect is what the UI reads from the answer: dotted path to the value,
	// a {{name}}, or a matcher (<uuid>, <string>, <time>, <number>, <bool>,
	// <array>, <object>, <any>).
	Expect map[string]any `json:"expect,omitempty"`
}

var placeholder = regexp.MustCompile(`\{\{([A-Za-z0-9_.:-]+)\}\}`)

// fill replaces every {{name}} in s with its captured value.
func fill(s string, vars map[string]string) (string, error) {
	var missing []string
	out := placeholder.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-2]
		v, ok := vars[name]
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("no value captured for %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// lookup reads a dotted path from decoded JSON; array elements by index.
func lookup(v any, path string) (any, bool) {
	if path == "" {
		return v, true
	}
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[part]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// check compares one expected field with the answer's, and says how it
// differs. Objects are compared key by key (the answer may hold more keys
// than the UI reads), arrays element by element, strings through their
// matcher or {{name}}.
func check(want any, got any, found bool, vars map[string]string) error {
	if !found {
		return fmt.Errorf("missing, want %s", compact(want))
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("got %s, want an object", compact(got))
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			v, found := g[k]
			if err := check(w[k], v, found, vars); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("got %s, want %d elements", compact(got), len(w))
		}
		for i := range w {
			if err := check(w[i], g[i], true, vars); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	case string:
		if strings.HasPrefix(w, "<") && strings.HasSuffix(w, ">") {
			return match(w, got)
		}
		v, err := fill(w, vars)
		if err != nil {
			return err
		}
		want = v
	}
	wj, _ := json.Marshal(want)
	gj, _ := json.Marshal(got)
	if !bytes.Equal(wj, gj) {
		return fmt.Errorf("got %s, want %s", gj, wj)
	}
	return nil
}

// match checks a value against a matcher such as <uuid>.
func match(m string, got any) error {
	str, isStr := got.(string)
	ok := false
	switch m {
	case "<any>":
		ok = true
	case "<uuid>":
		ok = isStr && looksLikeID(str)
	case "<string>":
		ok = isStr && str != ""
	case "<time>":
		if isStr {
			_, err := time.Parse(time.RFC3339Nano, str)
			ok = err == nil
		}
	case "<number>":
		_, ok = got.(float64)
	case "<bool>":
		_, ok = got.(bool)
	case "<array>":
		_, ok = got.([]any)
	case "<object>":
		_, ok = got.(map[string]any)
	default:
		return fmt.Errorf("unknown matcher %s", m)
	}
	if !ok {
		return fmt.Errorf("got %s, want %s", compact(got), m)
	}
	return nil
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// recordFixture turns the exchanges of the steps that passed into a
// fixture: each request once per step, server-made values named.
func recordFixture(commit string, exchanges []*exchange, passed map[string]bool, reviewerAuth string) fixture {
	f := fixture{Commit: commit, Note: "Recorded by `go run ./cmd/featbit-ui -record`; " +
		"expectations name the fields FeatBit's UI reads; review them before committing."}
	names := map[string]string{} // value -> {{name}}
	type origin struct {
		req  int
		path string
	}
	seenAt := map[string]origin{} // server-made value -> where an answer first gave it
	seen := map[string]bool{}
	secrets := map[string]bool{} // server-made values other than ids: first passwords
	sent := map[string]bool{}    // ids the UI made and sent
	for _, e := range exchanges {
		if !passed[e.Step] || e.Status >= 400 {
			continue
		}
		// A read repeated with the same answer is one read; with another
		// answer (the member list after an addition) it is the one that
		// gives later requests their values.
		key := e.Step + " " + e.Method + " " + e.Path + "?" + e.Query + " " + string(e.Body) + " " + string(e.Answer)
		if seen[key] {
			continue
		}
		seen[key] = true
		as := ""
		if (reviewerAuth != "" && e.Auth == reviewerAuth) ||
			(strings.HasSuffix(e.Path, "/login-by-email") && strings.Contains(string(e.Body), reviewerEmail)) {
			as = "reviewer"
		}
		// Name server-made values this request reuses: from the capture
		// table when an answer gave them there, by their origin otherwise.
		reuse := func(s string) string {
			for _, v := range sortedByLength(names) {
				s = strings.ReplaceAll(s, v, "{{"+names[v]+"}}")
			}
			found := uuidPattern.FindAllString(s, -1)
			for v := range secrets {
				if strings.Contains(s, v) {
					found = append(found, v)
				}
			}
			for _, id := range found {
				o, ok := seenAt[id]
				if !ok {
					continue // made by the UI (variation ids) or unknown: sent as is
				}
				name := fmt.Sprintf("r%d.%s", o.req+1, o.path)
				if f.Requests[o.req].Capture == nil {
					f.Requests[o.req].Capture = map[string]string{}
				}
				f.Requests[o.req].Capture[name] = o.path
				names[id] = name
				s = strings.ReplaceAll(s, id, "{{"+name+"}}")
			}
			return s
		}
		path := e.Path
		if e.Query != "" {
			path += "?" + e.Query
		}
		r := fixtureRequest{Step: e.Step, As: as, Method: e.Method, Path: reuse(path), Status: e.Status}
		if len(e.Body) > 0 {
			r.Body = json.RawMessage(reuse(string(e.Body)))
		}
		var answer any
		json.Unmarshal(e.Answer, &answer)
		for _, c := range capturesFor(e, as) {
			if v, ok := lookup(answer, c.path); ok {
				if s, ok := v.(string); ok && s != "" {
					if r.Capture == nil {
						r.Capture = map[string]string{}
					}
					r.Capture[c.name] = c.path
					names[s] = c.name
				}
			}
		}
		for _, uuid := range uuidPattern.FindAllString(string(r.Body), -1) {
			sent[uuid] = true // made by the UI: the replay sends the same
		}
		for _, read := range readsFor(e) {
			p, matcher, _ := strings.Cut(read, "=")
			v, ok := lookup(answer, p)
			if !ok {
				continue // the walk's recording lacks it; the reviewer adds it by hand
			}
			if r.Expect == nil {
				r.Expect = map[string]any{}
			}
			if matcher != "" {
				r.Expect[p] = matcher
			} else {
				r.Expect[p] = expectation(v, names, sent)
			}
		}
		idx := len(f.Requests)
		f.Requests = append(f.Requests, r)
		walkStrings(answer, "", func(p, s string) {
			secret := strings.HasSuffix(p, "initialPassword") && s != ""
			if secret {
				secrets[s] = true
			}
			if looksLikeID(s) || secret {
				if _, ok := seenAt[s]; !ok {
					seenAt[s] = origin{idx, p}
				}
			}
		})
	}
	return f
}

var uuidPattern = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)

// expectation writes a recorded value as what the replay checks: a
// captured value by name, an id the UI itself sent as it is, another id or
// a time by its kind; objects and arrays element by element.
func expectation(v any, names map[string]string, sent map[string]bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			out[k] = expectation(c, names, sent)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = expectation(c, names, sent)
		}
		return out
	case string:
		if n, ok := names[x]; ok {
			return "{{" + n + "}}"
		}
		if looksLikeID(x) && !sent[x] {
			return "<uuid>"
		}
		// Ids inside a string, such as a segment condition's "[\"<id>\"]".
		if ids := uuidPattern.FindAllString(x, -1); len(ids) > 0 {
			for _, id := range ids {
				if n, ok := names[id]; ok {
					x = strings.ReplaceAll(x, id, "{{"+n+"}}")
				}
			}
			return x
		}
		if _, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return "<time>"
		}
	}
	return v
}

func sortedByLength(m map[string]string) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int { return len(b) - len(a) })
	return keys
}

// walkStrings calls fn with the dotted path of every string in v.
func walkStrings(v any, path string, fn func(path, s string)) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch x := v.(type) {
	case string:
		fn(path, x)
	case map[string]any:
		for k, c := range x {
			walkStrings(c, join(k), fn)
		}
	case []any:
		for i, c := range x {
			walkStrings(c, join(strconv.Itoa(i)), fn)
		}
	}
}
