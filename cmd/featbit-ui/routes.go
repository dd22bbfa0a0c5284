package main

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bunting-flags/bunting/api"
)

// routeTable is what Bunting claims to answer: the paths and methods of its
// OpenAPI document (api/openapi.yaml, which TestEveryRouteIsDocumented-style
// tests keep equal to the router). A 4xx on a claimed route is a failure of
// the walk; one on a route Bunting does not claim is a gap, reported but
// expected until the route is added.
type routeTable struct {
	routes []route
}

type route struct {
	path    string
	parts   []string
	methods map[string]bool
}

func loadRoutes() (*routeTable, error) {
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(api.OpenAPIYAML, &doc); err != nil {
		return nil, fmt.Errorf("api/openapi.yaml: %w", err)
	}
	t := &routeTable{}
	for p, ops := range doc.Paths {
		r := route{path: p, parts: strings.Split(strings.Trim(p, "/"), "/"), methods: map[string]bool{}}
		for m := range ops {
			r.methods[strings.ToUpper(m)] = true
		}
		t.routes = append(t.routes, r)
	}
	return t, nil
}

// match returns the documented path p falls under ("" for none) and whether
// the document has method on it. Where several match, the one whose first
// differing segment is literal wins, as in the router (…/feature-flags/all-tags
// over …/feature-flags/{key}).
func (t *routeTable) match(method, p string) (string, bool) {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	var best *route
	for i := range t.routes {
		r := &t.routes[i]
		if len(r.parts) != len(parts) {
			continue
		}
		ok := true
		for j, seg := range r.parts {
			if !isParam(seg) && seg != parts[j] {
				ok = false
				break
			}
		}
		if ok && (best == nil || moreLiteral(r, best)) {
			best = r
		}
	}
	if best == nil {
		return "", false
	}
	return best.path, best.methods[method]
}

func isParam(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

// moreLiteral reports whether a has a literal segment where b first has a parameter.
func moreLiteral(a, b *route) bool {
	for j := range a.parts {
		pa, pb := isParam(a.parts[j]), isParam(b.parts[j])
		if pa != pb {
			return !pa
		}
	}
	return false
}

// routeName names an exchange's route for the summary: the documented path,
// or for an undocumented one the path with its ids and keys made generic.
func routeName(e *exchange) string {
	if e.Route != "" {
		return e.Method + " " + e.Route
	}
	parts := strings.Split(e.Path, "/")
	for i, s := range parts {
		if looksLikeID(s) {
			parts[i] = "{id}"
		}
	}
	return e.Method + " " + strings.Join(parts, "/")
}

// looksLikeID reports whether a path segment is a uuid.
func looksLikeID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
	}
	return true
}
