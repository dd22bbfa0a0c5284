package jsonbody

import (
	"encoding/json"
	"reflect"
	"slices"
	"unicode"
	"unicode/utf8"
)

// Member names: each object's are kept while it is walked, to refuse one
// named twice, and matched to a struct's fields, as encoding/json matches
// them.

// name is a member name: its text in data at [start, end) or, when start
// is negative, its folded form in spill at [-start-1, end).
type name struct {
	start, end int32
}

func (w *walker) text(n name) []byte {
	if n.start < 0 {
		return w.spill[-n.start-1 : n.end]
	}
	return w.data[n.start:n.end]
}

// keep adds a name to the names of the open objects. The names double
// rather than grow as append grows them past 256 elements: a body of one
// wide object then allocates twice its names, not five times.
func (w *walker) keep(n name) {
	if len(w.names) == cap(w.names) {
		grown := make([]name, len(w.names), 2*cap(w.names)+64)
		copy(grown, w.names)
		w.names = grown
	}
	w.names = append(w.names, n)
}

// name reads a member name, keeping it for closeObject, and returns it
// with its length as encoding/json will allocate it.
func (w *walker) name() (name, int) {
	start := w.pos + 1
	i := stringEnd(w.data, start)
	plain := true
	for _, c := range w.data[start:i] {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	w.pos = i + 1
	n := name{start: int32(start), end: int32(i)}
	if !plain {
		var s string
		_ = json.Unmarshal(w.data[start-1:i+1], &s) // valid: checked by json.Valid
		at := len(w.spill)
		w.spill = appendFolded(w.spill, []byte(s))
		n = name{start: -int32(at) - 1, end: int32(len(w.spill))}
	}
	w.keep(n)
	return n, i - start
}

// folded is a name as encoding/json matches it to a field.
func (w *walker) folded(n name) []byte {
	if n.start < 0 {
		return w.text(n)
	}
	w.fold = appendFolded(w.fold[:0], w.text(n))
	return w.fold
}

// closeObject refuses an object that names a member twice, and forgets its names.
func (w *walker) closeObject(first int) error {
	names := w.names[first:]
	defer func() { w.names = w.names[:first] }()
	if len(names) < 2 {
		return nil
	}
	compare := func(a, b name) int { return compareFolded(w.text(a), w.text(b)) }
	if len(names) <= 8 {
		for i := range names {
			for j := i + 1; j < len(names); j++ {
				if compare(names[i], names[j]) == 0 {
					return ErrInvalid
				}
			}
		}
		return nil
	}
	slices.SortFunc(names, compare)
	for i := 1; i < len(names); i++ {
		if compare(names[i-1], names[i]) == 0 {
			return ErrInvalid
		}
	}
	return nil
}

// compareFolded orders names by their folded forms: plain ASCII names are
// folded on the way, the others are folded already.
func compareFolded(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := upper(a[i]), upper(b[i])
		if x != y {
			return int(x) - int(y)
		}
	}
	return len(a) - len(b)
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// appendFolded folds a name as encoding/json does to match it to a field:
// ASCII letters in upper case, any other letter as the smallest of its
// case-folding orbit (so the Kelvin sign is K, and ſ is S).
func appendFolded(out, in []byte) []byte {
	for i := 0; i < len(in); {
		if c := in[i]; c < utf8.RuneSelf {
			out = append(out, upper(c))
			i++
			continue
		}
		r, n := utf8.DecodeRune(in[i:])
		for {
			next := unicode.SimpleFold(r)
			if next <= r {
				r = next
				break
			}
			r = next
		}
		out = utf8.AppendRune(out, r)
		i += n
	}
	return out
}

// typeInfo is what the walk needs to know of a type, found once: asking
// reflect for each value would cost more than the walk.
type typeInfo struct {
	unmarshaler bool // *T implements json.Unmarshaler
	text        bool // *T implements encoding.TextUnmarshaler
	// fields are a struct's fields encoding/json fills, by folded name,
	// including those promoted from embedded structs.
	fields map[string]field
}

// plain is the typeInfo of every type without methods or fields.
var plain = &typeInfo{}

func (w *walker) info(t reflect.Type) *typeInfo {
	if t.Kind() != reflect.Struct && (t.Name() == "" || t.PkgPath() == "") {
		return plain // predeclared or unnamed: it has no methods
	}
	if ti, ok := w.types[t]; ok {
		return ti
	}
	pt := reflect.PointerTo(t)
	ti := &typeInfo{unmarshaler: pt.Implements(unmarshalerType), text: pt.Implements(textUnmarshalerType)}
	if t.Kind() == reflect.Struct {
		ti.fields = map[string]field{}
		collect(t, nil, true, ti.fields)
	}
	w.types[t] = ti
	return ti
}

func collect(t reflect.Type, index []int, reachable bool, into map[string]field) {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, _, _ := cutComma(sf.Tag.Get("json"))
		if tag == "-" {
			continue
		}
		at := append(slices.Clip(index), i)
		if sf.Anonymous && tag == "" {
			ft, through := sf.Type, reachable
			if ft.Kind() == reflect.Pointer {
				ft, through = ft.Elem(), false // nil until encoding/json fills it
			}
			if ft.Kind() == reflect.Struct {
				collect(ft, at, through, into)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if tag == "" {
			tag = sf.Name
		}
		key := string(appendFolded(nil, []byte(tag)))
		if _, taken := into[key]; taken {
			continue
		}
		if !reachable {
			at = nil
		}
		into[key] = field{typ: sf.Type, index: at}
	}
}

func cutComma(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == ',' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
