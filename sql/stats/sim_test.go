package stats

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// peekingRun simulates experiments whose results are read at every look, a
// batch of users joining each arm between looks. It draws each batch's
// conversions (the sufficient statistic) rather than single events.
type peekingRun struct {
	experiments, looks, batch int
	rates                     []float64 // conversion rate per arm; arm 0 is the baseline
	seed                      uint64
}

type peekingResult struct {
	fixedFP, seqFP, holmSeqFP int // experiments with a false positive at any look
	seqDetected               int // experiments whose sequential interval excluded 0 at some look
	seqCovered                int // experiments whose sequential intervals held the true lift at every look
}

func (r peekingRun) run(alpha float64) peekingResult {
	src := rand.NewPCG(r.seed, r.seed^0x9e3779b97f4a7c15)
	names := []string{"a", "b", "c", "d", "e"}[:len(r.rates)]
	planned := int64(len(r.rates) * r.batch * r.looks)
	var res peekingResult
	groups := make([]Group, len(r.rates))
	for range r.experiments {
		for i := range groups {
			groups[i] = Group{Variation: names[i]}
		}
		var fixed, seq, holmSeq, detected bool
		covered := true
		for range r.looks {
			for i, p := range r.rates {
				k := distuv.Binomial{N: float64(r.batch), P: p, Src: src}.Rand()
				groups[i].N += int64(r.batch)
				groups[i].Sum += k
				groups[i].SumSquares += k
			}
			a := Analyze(Input{Groups: groups, Baseline: "a", Alpha: alpha, PlannedUsers: planned})
			for i, v := range a.Variations[1:] {
				if v.Lift == nil {
					continue
				}
				trueLift := r.rates[i+1]/r.rates[0] - 1
				excludes := v.SequentialInterval[0] > 0 || v.SequentialInterval[1] < 0
				detected = detected || excludes
				if trueLift < v.SequentialInterval[0] || trueLift > v.SequentialInterval[1] {
					covered = false
				}
				if trueLift == 0 {
					fixed = fixed || *v.PValue < alpha
					seq = seq || excludes
					holmSeq = holmSeq || *v.AdjustedSequentialPValue < alpha
				}
			}
		}
		for _, x := range []struct {
			hit bool
			n   *int
		}{{fixed, &res.fixedFP}, {seq, &res.seqFP}, {holmSeq, &res.holmSeqFP}, {detected, &res.seqDetected}, {covered, &res.seqCovered}} {
			if x.hit {
				*x.n++
			}
		}
	}
	return res
}

// TestPeekingFalsePositives: in A/A experiments read 50 times each, the
// fixed-horizon p-value crosses alpha at some look far more often than alpha,
// while the always-valid interval excludes 0 at some look at most alpha of the
// time.
func TestPeekingFalsePositives(t *testing.T) {
	t.Parallel()
	const alpha = 0.05
	r := peekingRun{experiments: 2000, looks: 50, batch: 200, rates: []float64{0.1, 0.1}, seed: 1}
	res := r.run(alpha)
	n := float64(r.experiments)
	fixed, seq := float64(res.fixedFP)/n, float64(res.seqFP)/n
	t.Logf("A/A, %d experiments × %d looks: fixed-horizon p < %.2f at any look in %.4f, sequential interval excludes 0 at any look in %.4f",
		r.experiments, r.looks, alpha, fixed, seq)
	if seq > alpha {
		t.Errorf("sequential false-positive rate %.4f, want ≤ %.2f", seq, alpha)
	}
	if fixed <= 0.15 {
		t.Errorf("fixed-horizon false-positive rate under peeking %.4f, want > 0.15 (peeking must inflate it)", fixed)
	}
}

// TestPeekingFamilyWise: with three variations against one baseline, all
// equal, the Bonferroni-level sequential intervals and Holm-adjusted
// always-valid p-values keep the family-wise false-positive rate under alpha
// across all looks.
func TestPeekingFamilyWise(t *testing.T) {
	t.Parallel()
	const alpha = 0.05
	r := peekingRun{experiments: 500, looks: 50, batch: 200, rates: []float64{0.1, 0.1, 0.1, 0.1}, seed: 2}
	res := r.run(alpha)
	n := float64(r.experiments)
	t.Logf("A/A/A/A, %d experiments × %d looks: family-wise fixed %.4f, sequential interval %.4f, Holm sequential p %.4f",
		r.experiments, r.looks, float64(res.fixedFP)/n, float64(res.seqFP)/n, float64(res.holmSeqFP)/n)
	if f := float64(res.seqFP) / n; f > alpha {
		t.Errorf("family-wise sequential interval rate %.4f, want ≤ %.2f", f, alpha)
	}
	if f := float64(res.holmSeqFP) / n; f > alpha {
		t.Errorf("family-wise Holm sequential p rate %.4f, want ≤ %.2f", f, alpha)
	}
}

// TestPeekingFindsRealEffect: with a true 25% lift (10% → 12.5%) the sequential
// interval does exclude 0 by the planned end, and holds the true lift at
// every look in at least 1−alpha of the experiments.
func TestPeekingFindsRealEffect(t *testing.T) {
	t.Parallel()
	const alpha = 0.05
	r := peekingRun{experiments: 300, looks: 50, batch: 200, rates: []float64{0.10, 0.125}, seed: 3}
	res := r.run(alpha)
	n := float64(r.experiments)
	power, coverage := float64(res.seqDetected)/n, float64(res.seqCovered)/n
	t.Logf("true lift 25%%: sequential interval excluded 0 in %.4f of experiments; held the true lift at every look in %.4f",
		power, coverage)
	if power < 0.95 {
		t.Errorf("sequential power %.4f, want ≥ 0.95", power)
	}
	if coverage < 1-alpha {
		t.Errorf("time-uniform coverage %.4f, want ≥ %.2f", coverage, 1-alpha)
	}
}
