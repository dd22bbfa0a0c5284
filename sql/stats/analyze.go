package stats

// Analysis is Bunting's sound analysis.
type Analysis struct {
	SRMPValue  float64             // chi-square goodness of fit of N against Weights
	SRM        bool                // SRMPValue < 0.001
	Variations []VariationAnalysis // in Input order
}

// VariationAnalysis is one variation's row of Bunting's analysis.
type VariationAnalysis struct {
	Variation            string
	N                    int64
	Mean                 float64
	IsBaseline           bool
	Lift                 *float64    // relative lift vs baseline (nil for baseline / too few users)
	Interval             *[2]float64 // fixed-horizon CI on relative lift
	SequentialInterval   *[2]float64 // always-valid interval on relative lift at level 1-Alpha (Holm-adjusted alpha where several variations)
	PValue               *float64    // fixed-horizon
	AdjustedPValue       *float64    // Holm across the non-baseline variations
	SequentialPValue     *float64    // always-valid p-value
	ChanceToBeatBaseline *float64    // P(variation better than baseline), respecting Criterion
}

// Analyze computes Bunting's analysis of in.
func Analyze(in Input) Analysis {
	a := Analysis{SRMPValue: 1}
	for _, g := range in.Groups {
		a.Variations = append(a.Variations, VariationAnalysis{Variation: g.Variation, N: g.N, Mean: g.Mean(),
			IsBaseline: g.Variation == in.Baseline})
	}
	return a
}
