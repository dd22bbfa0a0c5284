// Package jsonbody decodes request bodies strictly and at a bounded cost in
// memory. Decoding alone turns a small body into a large value: every `{}`
// of `[{},{},…]` becomes a whole struct (a 1 MiB body of them, 100 MB of
// statements), and encoding/json lets a body name a member twice. Decode
// walks the body first, allocating next to nothing, to refuse a member named
// twice and to price what decoding it would allocate; only a body within its
// price is decoded, into slices sized exactly beforehand so that growing
// them costs nothing either.
//
// The syntax, UTF-8 and the types are encoding/json/v2's to check (its
// module, github.com/go-json-experiment/json: the standard library has it
// only under GOEXPERIMENT=jsonv2): jsontext validates the body, and v2
// decodes it with encoding/json's (v1's) semantics, so a body decodes as
// encoding/json decodes it, but stops at the first value of the wrong type
// where encoding/json would go on and make an error of every one. The walk
// keeps the check of member names: v2 refuses a name repeated exactly and a
// struct field named twice, not two names of a map, of a skipped member or of
// a raw value that differ only in case, which a later case-insensitive
// decoding (a patch's values, a draft's target) would take for one; and its
// check keeps every name of a wide object in a map (32 times the size of a
// 1 MiB object of short names, where the walk sorts them in place).
package jsonbody

import (
	"encoding"
	"encoding/json"
	"errors"
	"reflect"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Factor and Slack bound what decoding a body may allocate: Factor times
// its size, plus Slack for small bodies whose decoded form is naturally
// larger than their text. Real bodies stay far below (a segment of
// 100,000 4-character keys is priced at 3.3 times its size, a thousand
// statements at 1.7 times); a body that would cost more is made of
// thousands of tiny values no route reads (`[{},{},…]` of statements, 32
// times its size).
const (
	Factor = 8
	Slack  = 16 << 10
)

var (
	// ErrInvalid is a body that is not one JSON value of valid UTF-8, or
	// that names a member twice in one object (in any case, as
	// encoding/json would match it to the same field and keep the last),
	// or a top-level object none of whose members is a field of the target
	// struct.
	ErrInvalid = errors.New("jsonbody: invalid body")
	// ErrTooCostly is a body whose decoding would allocate more than allowed.
	ErrTooCostly = errors.New("jsonbody: decoding would take too much memory")
)

// Decode decodes data into v, a non-nil pointer, allocating at most
// Factor times len(data) plus Slack; see Allowance.Decode.
func Decode(data []byte, v any) error {
	a := Allowance{Bytes: Factor*int64(len(data)) + Slack}
	return a.Decode(data, v)
}

// Allowance is what decodings may still allocate, in bytes; one allowance
// shared by the parts of a stream bounds the stream as a whole.
type Allowance struct {
	Bytes int64
	// types are what the decodings found of the types they met, kept for
	// the next one.
	types map[reflect.Type]*typeInfo
}

// Decode checks data and decodes it into v, a non-nil pointer, drawing the
// price of decoding it from the allowance: ErrInvalid for a body that is
// wrong, ErrTooCostly for one that would cost more than is left (refused
// before it costs more), or the decoder's error for a value of the wrong
// type.
func (a *Allowance) Decode(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &json.InvalidUnmarshalError{Type: reflect.TypeOf(v)}
	}
	// Names repeated are the walk's to refuse, at no cost in memory.
	if !jsontext.Value(data).IsValid(jsontext.AllowDuplicateNames(true)) {
		return ErrInvalid
	}
	if a.types == nil {
		a.types = map[reflect.Type]*typeInfo{}
	}
	cost, err := prepare(data, rv.Elem(), a.Bytes, a.types)
	if err != nil {
		return err
	}
	a.Bytes -= cost
	return jsonv2.Unmarshal(data, v, decodeOptions)
}

// decodeOptions decode as encoding/json does, but stop at the first error:
// a body of wrongly typed values costs one error, not one each.
var decodeOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv1.ReportErrorsWithLegacySemantics(false))

// prepare walks data as it will be decoded into v, checking it, sizing
// v's slices and returning the price, or ErrTooCostly as soon as the price
// is over limit. Its own memory is gone once it returns, before
// the decoder fills v.
func prepare(data []byte, v reflect.Value, limit int64, types map[reflect.Type]*typeInfo) (int64, error) {
	w := walker{data: data, limit: limit, types: types}
	err := w.walk(v)
	return w.cost, err
}

// Sizes of what the decoder allocates where the walk cannot size it
// beforehand: values decoded into interfaces, and maps (amd64).
const (
	anyString  = 16  // a string boxed in an interface
	anyNumber  = 8   // a float64 boxed in an interface
	anySlice   = 24  // a []any boxed in an interface
	anyElement = 40  // an element of a []any, with the slice's growth
	anyMap     = 48  // a map's header
	mapEntry   = 128 // an entry of a map, with the table's growth, besides its value's size
	// A level of nesting decoded into an interface is a level of
	// the decoder's recursion, on the goroutine's stack.
	anyLevel = 512
	// A slice the walk cannot size (a map's value, or one that has
	// elements already) grows as the decoder appends to it.
	growth = 4
)

// field is a struct field the decoder fills: its type and, when it is
// reached without a nil pointer on the way, its index.
type field struct {
	typ   reflect.Type
	index []int
}

// walker prices the decoding of one body, checks it on the way, and sizes
// the slices of the value it will be decoded into.
type walker struct {
	data  []byte
	pos   int
	cost  int64
	limit int64
	// names holds the member names of the objects being walked, every
	// open object's after its parent's; spill holds the folded form of
	// names that are not plain ASCII.
	names []name
	spill []byte
	// types are what the walk found of the types it met.
	types map[reflect.Type]*typeInfo
	fold  []byte  // scratch for folding a name
	stack []level // skim's
}

// charge adds to the price, refusing the body once it is over the limit:
// it is charged before anything is allocated, so nothing past the limit is.
func (w *walker) charge(n int64) error {
	w.cost += n
	if w.cost > w.limit {
		return ErrTooCostly
	}
	return nil
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
)

// walk walks the body as it will be decoded into v.
func (w *walker) walk(v reflect.Value) error {
	w.space()
	if w.data[w.pos] == '{' && isStruct(v.Type()) {
		// A top-level object must name at least one field of the struct:
		// naming none, it means something the route does not read.
		named, members, err := w.object(v.Type(), v)
		if err == nil && members > 0 && !named {
			err = ErrInvalid
		}
		return err
	}
	return w.value(v.Type(), v)
}

func isStruct(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && !reflect.PointerTo(t).Implements(unmarshalerType)
}

// deref follows pointers as the decoder does, allocating what they point
// to. v is the settable place of a value of type t, or invalid where that
// place cannot be reached before decoding (a map's values): then the value
// is priced but not sized.
func (w *walker) deref(t reflect.Type, v reflect.Value) (reflect.Type, reflect.Value, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
		if err := w.charge(int64(t.Size())); err != nil {
			return nil, v, err
		}
		if v.IsValid() {
			if v.IsNil() {
				v.Set(reflect.New(t))
			}
			v = v.Elem()
		}
	}
	return t, v, nil
}

// value walks one value as decoded into v, of type t. A value of the
// wrong type for t is priced nothing: the decoder refuses it, and stops
// there.
func (w *walker) value(t reflect.Type, v reflect.Value) error {
	w.space()
	c := w.data[w.pos]
	if c == 'n' { // null sets pointers, slices and maps to nil and allocates nothing
		w.pos += len("null")
		return nil
	}
	t, v, err := w.deref(t, v)
	if err != nil {
		return err
	}
	switch {
	case t == rawMessageType: // a copy of the value
		start := w.pos
		if err := w.skim(false); err != nil {
			return err
		}
		return w.charge(int64(w.pos - start))
	case w.info(t).unmarshaler:
		// What it allocates is its own, and it may fail: priced as
		// decoding into any, and an error.
		if err := w.charge(failure); err != nil {
			return err
		}
		return w.skim(true)
	case t.Kind() == reflect.Interface:
		return w.skim(t.NumMethod() == 0) // into any; the decoder cannot make another interface
	}
	text := w.info(t).text
	switch c {
	case '{':
		if k := t.Kind(); k == reflect.Struct || k == reflect.Map {
			_, _, err := w.object(t, v)
			return err
		}
		return w.skim(false)
	case '[':
		if k := t.Kind(); k == reflect.Slice || k == reflect.Array {
			return w.array(t, v)
		}
		return w.skim(false)
	case '"':
		n := roundUp(w.str())
		switch {
		case text: // the text handed over, and the error it may make of it
			return w.charge(n + failure)
		case t.Kind() == reflect.String, t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
			return w.charge(n) // the string, or the bytes of base64
		}
		return nil
	}
	start := w.pos
	w.literal()
	if t.Kind() == reflect.String { // a number kept as its text (json.Number)
		return w.charge(roundUp(w.pos - start))
	}
	return nil
}

// failure is what the decoder allocates for the error it stops at.
const failure = 128

// object walks an object as decoded into v: a struct's fields or a map's
// entries. It reports whether a member names one of the struct's fields,
// and how many members there are.
func (w *walker) object(t reflect.Type, v reflect.Value) (named bool, members int, err error) {
	if t, v, err = w.deref(t, v); err != nil {
		return false, 0, err
	}
	var fields map[string]field
	if t.Kind() == reflect.Struct {
		fields = w.info(t).fields
	} else if err := w.charge(anyMap); err != nil { // a map
		return false, 0, err
	}
	w.pos++ // {
	first := len(w.names)
	for {
		w.space()
		if w.data[w.pos] == '}' {
			break
		}
		if members > 0 {
			w.pos++ // ,
			w.space()
		}
		n, keyLen := w.name()
		members++
		w.space()
		w.pos++ // :
		if fields == nil {
			// A map's entry: its key, its place, and its value, priced but not sized.
			if err := w.charge(roundUp(keyLen) + mapEntry + int64(t.Elem().Size())); err != nil {
				return false, 0, err
			}
			if err := w.value(t.Elem(), reflect.Value{}); err != nil {
				return false, 0, err
			}
			continue
		}
		f, ok := fields[string(w.folded(n))]
		if !ok {
			if err := w.skim(false); err != nil {
				return false, 0, err
			}
			continue
		}
		named = true
		var fv reflect.Value // priced only when reached through a nil embedded pointer
		if v.IsValid() && f.index != nil {
			fv = v.FieldByIndex(f.index)
		}
		if err := w.value(f.typ, fv); err != nil {
			return false, 0, err
		}
	}
	w.pos++ // }
	return named, members, w.closeObject(first)
}

// array walks an array as decoded into v: a slice, made here with exactly
// its elements, or a fixed array.
func (w *walker) array(t reflect.Type, v reflect.Value) error {
	if n := w.count(); t.Kind() == reflect.Slice && n > 0 {
		// the decoder decodes into the elements a slice has and appends
		// past them: an empty slice made whole here never grows. One that
		// has elements keeps them, for the decoder to decode into.
		size := int64(n) * int64(t.Elem().Size())
		sized := v.IsValid() && v.Len() == 0
		if !sized {
			size *= growth
		}
		if err := w.charge(size); err != nil {
			return err
		}
		if sized {
			v.Set(reflect.MakeSlice(t, n, n))
		}
	}
	w.pos++ // [
	for i := 0; ; i++ {
		w.space()
		if w.data[w.pos] == ']' {
			break
		}
		if i > 0 {
			w.pos++ // ,
		}
		var err error
		switch {
		case t.Kind() == reflect.Array && i >= t.Len():
			err = w.skim(false) // past a fixed array's end: dropped
		case v.IsValid() && i < v.Len():
			err = w.value(t.Elem(), v.Index(i))
		default:
			err = w.value(t.Elem(), reflect.Value{})
		}
		if err != nil {
			return err
		}
	}
	w.pos++ // ]
	return nil
}
