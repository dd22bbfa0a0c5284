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
	"slices"
	"strconv"
	"unicode"
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
	// fields are the fields of the struct types met, by folded name,
	// kept for the next decoding.
	fields map[reflect.Type]map[string]field
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
	if a.fields == nil {
		a.fields = map[reflect.Type]map[string]field{}
	}
	cost, err := prepare(data, rv.Elem(), a.Bytes, a.fields)
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
func prepare(data []byte, v reflect.Value, limit int64, fields map[reflect.Type]map[string]field) (int64, error) {
	w := walker{data: data, limit: limit, fields: fields}
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
	// fields are the fields of the struct types met, by folded name.
	fields map[reflect.Type]map[string]field
	fold   []byte  // scratch for folding a name
	stack  []level // skim's
}

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
	case reflect.PointerTo(t).Implements(unmarshalerType):
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
	text := reflect.PointerTo(t).Implements(textUnmarshalerType)
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
// entries, or skipped when v is neither. It reports whether a member names
// one of the struct's fields, and how many members there are.
func (w *walker) object(t reflect.Type, v reflect.Value) (named bool, members int, err error) {
	if t, v, err = w.deref(t, v); err != nil {
		return false, 0, err
	}
	var fields map[string]field
	switch t.Kind() {
	case reflect.Struct:
		fields = w.fieldsOf(t)
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
// its elements, a fixed array, or skipped.
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

// level is an object skim is in, by where its member names start in
// w.names, or an array (-1).
type level int32

// skim walks a value that is not decoded field by field: skipped (no
// field takes it), or decoded into an interface (costed), then priced as
// the maps, slices and boxed values encoding/json makes of it. It checks
// member names as everywhere, without recursion, so nesting costs it
// nothing.
func (w *walker) skim(costed bool) error {
	stack := w.stack[:0]
	defer func() { w.stack = stack[:0] }()
	depth := 0
	charge := func(n int64) error {
		if !costed {
			return nil
		}
		return w.charge(n)
	}
	for {
		// At a value.
		w.space()
		var err error
		switch c := w.data[w.pos]; c {
		case '{', '[':
			w.pos++
			if c == '{' {
				stack = append(stack, level(len(w.names)))
				err = charge(anyMap)
			} else {
				stack = append(stack, -1)
				err = charge(anySlice)
			}
			if err == nil && len(stack) > depth {
				depth = len(stack)
				err = charge(anyLevel)
			}
		case '"':
			err = charge(anyString + roundUp(w.str()))
		default:
			if w.literal() {
				err = charge(anyNumber)
			}
		}
		if err != nil {
			return err
		}
		// After it: close what ends here, then move to the next value.
		for {
			if len(stack) == 0 {
				return nil
			}
			top := stack[len(stack)-1]
			w.space()
			c := w.data[w.pos]
			if c == '}' || c == ']' {
				w.pos++
				if top >= 0 {
					if err := w.closeObject(int(top)); err != nil {
						return err
					}
				}
				stack = stack[:len(stack)-1]
				continue
			}
			if c == ',' {
				w.pos++
				w.space()
			}
			if top >= 0 {
				_, keyLen := w.name()
				w.space()
				w.pos++ // :
				err = charge(roundUp(keyLen) + mapEntry)
			} else {
				err = charge(anyElement)
			}
			if err != nil {
				return err
			}
			break
		}
	}
}

// count counts the elements of the array at w.pos, without moving.
func (w *walker) count() int {
	i := w.pos + 1
	for isSpace(w.data[i]) {
		i++
	}
	if w.data[i] == ']' {
		return 0
	}
	n, depth := 1, 1
	for ; depth > 0; i++ {
		switch w.data[i] {
		case '"':
			for i++; w.data[i] != '"'; i++ {
				if w.data[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case ',':
			if depth == 1 {
				n++
			}
		}
	}
	return n
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// name reads a member name, keeping it for closeObject, and returns it
// with its length as encoding/json will allocate it.
func (w *walker) name() (name, int) {
	start := w.pos + 1
	plain := true
	i := start
	for ; w.data[i] != '"'; i++ {
		switch c := w.data[i]; {
		case c == '\\':
			plain = false
			i++
		case c >= utf8.RuneSelf:
			plain = false
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

// str skips a string and returns the length of its text.
func (w *walker) str() int {
	start := w.pos + 1
	i := start
	for ; w.data[i] != '"'; i++ {
		if w.data[i] == '\\' {
			i++
		}
	}
	w.pos = i + 1
	return i - start
}

// literal skips a number, true or false, reporting whether it was a number.
func (w *walker) literal() bool {
	number := w.data[w.pos] != 't' && w.data[w.pos] != 'f'
	for w.pos < len(w.data) {
		if c := w.data[w.pos]; c == ',' || c == '}' || c == ']' || isSpace(c) {
			break
		}
		w.pos++
	}
	return number
}

func (w *walker) space() {
	for w.pos < len(w.data) && isSpace(w.data[w.pos]) {
		w.pos++
	}
}

// roundUp is the size of the block a string of n bytes takes.
func roundUp(n int) int64 {
	return int64(n+7) &^ 7
}

// fieldsOf lists the fields encoding/json fills in a struct, by folded
// name, including those promoted from embedded structs.
func (w *walker) fieldsOf(t reflect.Type) map[string]field {
	if f, ok := w.fields[t]; ok {
		return f
	}
	f := map[string]field{}
	collect(t, nil, true, f)
	w.fields[t] = f
	return f
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
