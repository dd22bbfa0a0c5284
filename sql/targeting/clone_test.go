package targeting

import (
	"reflect"
	"testing"
)

// TestCloneSharesNothing fills every field a Flag or a Segment has, today's
// and any added later, clones it, and then changes every value reachable
// from the clone: the original must stay as it was. A field Clone forgets to
// copy fails here rather than leaking an edit into a change's "before".
func TestCloneSharesNothing(t *testing.T) {
	t.Run("flag", func(t *testing.T) {
		var f Flag
		fill(reflect.ValueOf(&f).Elem(), 0)
		want := f
		fill(reflect.ValueOf(&want).Elem(), 0) // the same values, in memory of its own
		c := f.Clone()
		if !reflect.DeepEqual(c, f) {
			t.Fatalf("clone differs from the original:\n%+v\n%+v", c, f)
		}
		scribble(reflect.ValueOf(&c).Elem())
		if !reflect.DeepEqual(f, want) {
			t.Errorf("changing the clone changed the original:\n%+v", f)
		}
	})
	t.Run("segment", func(t *testing.T) {
		var sg Segment
		fill(reflect.ValueOf(&sg).Elem(), 0)
		want := sg
		fill(reflect.ValueOf(&want).Elem(), 0)
		c := sg.Clone()
		if !reflect.DeepEqual(c, sg) {
			t.Fatalf("clone differs from the original:\n%+v\n%+v", c, sg)
		}
		scribble(reflect.ValueOf(&c).Elem())
		if !reflect.DeepEqual(sg, want) {
			t.Errorf("changing the clone changed the original:\n%+v", sg)
		}
	})
	t.Run("nil and empty stay apart", func(t *testing.T) {
		f := Flag{Variations: []Variation{}, Rules: nil}
		c := f.Clone()
		if c.Variations == nil || c.Rules != nil {
			t.Errorf("clone of empty and nil slices: %#v, %#v", c.Variations, c.Rules)
		}
	})
}

// fill sets every field reachable from v to a value that is not zero: two
// elements in each slice, a value behind each pointer. Struct fields of
// types that hold no references (times, ids) keep what fill gives them.
func fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("s")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), depth+1)
		}
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), depth+1)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

// scribble changes every value reachable through the slices and pointers
// of v, in place.
func scribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("changed")
	case reflect.Bool:
		v.SetBool(false)
	case reflect.Float64:
		v.SetFloat(0.25)
	case reflect.Uint8:
		v.SetUint(9)
	case reflect.Pointer:
		if !v.IsNil() {
			scribble(v.Elem())
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			scribble(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				scribble(v.Field(i))
			}
		}
	}
}
