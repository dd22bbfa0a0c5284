// Package jsonbody decodes request bodies strictly and at a bounded cost in
// memory. encoding/json alone turns a small body into a large value: every
// `{}` of `[{},{},…]` becomes a whole struct (a 1 MiB body of them, 100 MB
// of statements), and nothing stops a body from naming a member twice.
// Decode walks the body first, allocating next to nothing, to refuse what
// encoding/json would accept silently and to price what decoding it would
// allocate; only a body within its price is decoded, into slices sized
// exactly beforehand so that growing them costs nothing either.
package jsonbody

import (
	"encoding"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"unicode/utf8"
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
// before it costs more), or encoding/json's error for a value of the wrong
// type.
func (a *Allowance) Decode(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &json.InvalidUnmarshalError{Type: reflect.TypeOf(v)}
	}
	if !utf8.Valid(data) || !json.Valid(data) {
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
	return json.Unmarshal(data, v)
}

// prepare walks data as it will be decoded into v, checking it, sizing
// v's slices and returning the price, or ErrTooCostly as soon as the price
// is over limit. Its own memory is gone once it returns, before
// encoding/json fills v.
func prepare(data []byte, v reflect.Value, limit int64, types map[reflect.Type]*typeInfo) (int64, error) {
	w := walker{data: data, limit: limit, types: types}
	err := w.walk(v)
	return w.cost, err
}

// Sizes of what encoding/json allocates where the walk cannot size it
// beforehand: values decoded into interfaces, and maps (amd64).
const (
	anyString  = 16  // a string boxed in an interface
	anyNumber  = 8   // a float64 boxed in an interface
	anySlice   = 24  // a []any boxed in an interface
	anyElement = 40  // an element of a []any, with the slice's growth
	anyMap     = 48  // a map's header
	mapEntry   = 128 // an entry of a map, with the table's growth, besides its value's size
	// A level of nesting decoded into an interface is a level of
	// encoding/json's recursion, on the goroutine's stack.
	anyLevel = 512
	// A slice the walk cannot size (a map's value, or one that has
	// elements already) grows as encoding/json appends to it.
	growth = 4
)

// field is a struct field encoding/json fills: its type and, when it is
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
	numberType          = reflect.TypeFor[json.Number]()
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

// deref follows pointers as encoding/json does, allocating what they point
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
// wrong type for t is refused here: encoding/json would make an error of
// every one (keeping only the first), and a body of them costs that many.
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
		if t.NumMethod() > 0 {
			return ErrInvalid // encoding/json cannot make one
		}
		return w.skim(true)
	}
	text := w.info(t).text
	switch c {
	case '{':
		_, _, err := w.object(t, v)
		return err
	case '[':
		return w.array(t, v)
	case '"':
		n := roundUp(w.str())
		switch {
		case text: // the text handed over, and the error it may make of it
			return w.charge(n + failure)
		case t.Kind() == reflect.String, t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
			return w.charge(n) // the string, or the bytes of base64
		}
	case 't', 'f':
		w.literal()
		if t.Kind() == reflect.Bool && !text {
			return nil
		}
	default:
		start := w.pos
		w.literal()
		if !text && fits(t, w.data[start:w.pos]) {
			if t.Kind() == reflect.String { // a json.Number
				return w.charge(roundUp(w.pos - start))
			}
			return nil
		}
	}
	return ErrInvalid
}

// failure is what encoding/json allocates for an error it saves.
const failure = 128

// fits reports whether encoding/json decodes the number into t without error.
func fits(t reflect.Type, number []byte) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err := strconv.ParseInt(string(number), 10, t.Bits())
		return err == nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		_, err := strconv.ParseUint(string(number), 10, t.Bits())
		return err == nil
	case reflect.Float32, reflect.Float64:
		_, err := strconv.ParseFloat(string(number), t.Bits())
		return err == nil
	case reflect.String:
		return t == numberType
	}
	return false
}

// object walks an object as decoded into v: a struct's fields, a map's
// entries, or refused when v is neither. It reports whether a member names
// one of the struct's fields, and how many members there are.
func (w *walker) object(t reflect.Type, v reflect.Value) (named bool, members int, err error) {
	if t, v, err = w.deref(t, v); err != nil {
		return false, 0, err
	}
	var fields map[string]field
	switch t.Kind() {
	case reflect.Struct:
		fields = w.info(t).fields
	case reflect.Map:
		if err := w.charge(anyMap); err != nil {
			return false, 0, err
		}
	default:
		return false, 0, ErrInvalid // encoding/json cannot put an object there
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
// its elements, a fixed array, or refused when v is neither.
func (w *walker) array(t reflect.Type, v reflect.Value) error {
	if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
		return ErrInvalid // encoding/json cannot put an array there
	}
	if n := w.count(); t.Kind() == reflect.Slice && n > 0 {
		// encoding/json decodes into the elements a slice has and appends
		// past them: an empty slice made whole here never grows. One that
		// has elements keeps them, for encoding/json to decode into.
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
