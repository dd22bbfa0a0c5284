package targeting

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// A rollout is stored as FeatBit stores it, fractions of [0, 1]; people
// write it as percentages with at most two decimals, so the finest share a
// person can give is one hundredth of a percent: a basis point, 1/10,000.
const (
	// WholeRollout is 100% in basis points.
	WholeRollout = 10000
)

// Errors of ParsePercent, which the rule editor names on the field.
var (
	ErrPercentNotANumber  = errors.New("percent_is_not_a_number")
	ErrPercentOutOfRange  = errors.New("percent_is_out_of_range")
	ErrPercentTooPrecise  = errors.New("percent_has_more_than_two_decimals")
	errPercentEmptyDigits = ErrPercentNotANumber
)

// ParsePercent reads a percentage as a person types it ("12", "12.5",
// "12.34", "0.01") into basis points (1234 for "12.34"). It refuses more
// than two decimals rather than rounding them away, since a rollout that
// serves something other than what was typed would surprise whoever typed
// it; it reads the digits itself so that 0.29 is 29, not 28.999….
func ParsePercent(s string) (int, error) {
	s = strings.TrimSpace(s)
	whole, frac, dotted := strings.Cut(s, ".")
	if whole == "" && (!dotted || frac == "") {
		return 0, errPercentEmptyDigits
	}
	for _, part := range []string{whole, frac} {
		for _, r := range part {
			if r < '0' || r > '9' {
				return 0, ErrPercentNotANumber
			}
		}
	}
	if dotted && frac == "" {
		return 0, ErrPercentNotANumber
	}
	if len(strings.TrimRight(frac, "0")) > 2 {
		return 0, ErrPercentTooPrecise
	}
	frac = strings.TrimRight(frac, "0")
	if len(strings.TrimLeft(whole, "0")) > 3 {
		return 0, ErrPercentOutOfRange
	}
	n := 0
	if whole != "" {
		n, _ = strconv.Atoi(whole)
	}
	bp := n * 100
	if frac != "" {
		f, _ := strconv.Atoi((frac + "0")[:2])
		bp += f
	}
	if bp > WholeRollout {
		return 0, ErrPercentOutOfRange
	}
	return bp, nil
}

// FormatPercent writes basis points as the shortest percentage that reads
// back to them: 5000 is "50", 1250 "12.5", 1234 "12.34".
func FormatPercent(bp int) string {
	return strconv.FormatFloat(float64(bp)/100, 'f', -1, 64)
}

// BasisPoints is the width of a stored range, hi - lo of [0, 1], in basis
// points, rounded to the nearest: ranges written by percentages with two
// decimals come back exactly, and ranges made elsewhere (thirds) to the
// nearest hundredth of a percent.
func BasisPoints(lo, hi float64) int {
	return int(math.Round((hi - lo) * WholeRollout))
}

// RolloutRange is the stored range of a share that starts at basis point at
// and is bp wide. Dividing integers keeps the ends exact decimals, so
// consecutive shares meet where the next begins.
func RolloutRange(at, bp int) []float64 {
	return []float64{float64(at) / WholeRollout, float64(at+bp) / WholeRollout}
}
