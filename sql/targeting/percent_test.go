package targeting

import (
	"errors"
	"testing"
)

func TestParsePercent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int
		err  error
	}{
		{"0", 0, nil}, {"100", 10000, nil}, {"12", 1200, nil}, {"12.5", 1250, nil}, {"12.34", 1234, nil},
		{"0.01", 1, nil}, {".29", 29, nil}, {"0.29", 29, nil}, {" 33.33 ", 3333, nil}, {"12.340", 1234, nil}, {"100.00", 10000, nil},
		{"12.345", 0, ErrPercentTooPrecise}, {"0.001", 0, ErrPercentTooPrecise},
		{"100.01", 0, ErrPercentOutOfRange}, {"1000", 0, ErrPercentOutOfRange}, {"99999999999999999999", 0, ErrPercentOutOfRange},
		{"", 0, ErrPercentNotANumber}, {".", 0, ErrPercentNotANumber}, {"12.", 0, ErrPercentNotANumber},
		{"-1", 0, ErrPercentNotANumber}, {"1e2", 0, ErrPercentNotANumber}, {"12,5", 0, ErrPercentNotANumber},
	} {
		got, err := ParsePercent(tc.in)
		if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("ParsePercent(%q): got %d, %v; want %d, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// Every percentage with two decimals goes to a range and back unchanged,
// and consecutive ranges meet exactly.
func TestPercentRoundTrip(t *testing.T) {
	t.Parallel()
	for bp := 0; bp <= WholeRollout; bp++ {
		r := RolloutRange(0, bp)
		if got := BasisPoints(r[0], r[1]); got != bp {
			t.Fatalf("%d basis points came back as %d", bp, got)
		}
		back, err := ParsePercent(FormatPercent(bp))
		if err != nil || back != bp {
			t.Fatalf("%d basis points written %q read back as %d, %v", bp, FormatPercent(bp), back, err)
		}
		if bp > 0 && RolloutRange(0, bp)[1] != RolloutRange(bp, 1)[0] {
			t.Fatalf("ranges at %d do not meet", bp)
		}
	}
}
