package jsonbody

import "bytes"

// Scanning the body's text, which Decode has checked is valid JSON.

// level is an object skim is in, by where its member names start in
// w.names, or an array (-1).
type level int32

// skim walks a value that is not decoded field by field: skipped (no
// field takes it), or decoded into an interface (costed), then priced as
// the maps, slices and boxed values encoding/json makes of it. It checks
// member names as everywhere, without recursion: a level of nesting costs
// it 4 bytes.
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
			i = stringEnd(w.data, i+1)
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

// str skips a string and returns the length of its text.
func (w *walker) str() int {
	start := w.pos + 1
	end := stringEnd(w.data, start)
	w.pos = end + 1
	return end - start
}

// stringEnd finds the quote that ends the string whose text starts at
// start: the first quote after an even number of backslashes. It looks for
// quotes with bytes.IndexByte, not byte by byte: most of a body is text.
func stringEnd(data []byte, start int) int {
	for i := start; ; {
		end := i + bytes.IndexByte(data[i:], '"')
		escapes := 0
		for j := end - 1; j >= start && data[j] == '\\'; j-- {
			escapes++
		}
		if escapes%2 == 0 {
			return end
		}
		i = end + 1
	}
}

// literal skips a number, true, false or null, reporting whether it was a
// number.
func (w *walker) literal() bool {
	c := w.data[w.pos]
	number := c != 't' && c != 'f' && c != 'n'
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
