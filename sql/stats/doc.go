// Package stats computes experiment statistics from per-variation sums
// (users N, Σx, Σx²). It is pure: no database, no network, no state.
//
// It holds two analyses of the same Input.
//
// # FeatBit
//
// FeatBit reproduces FeatBit's data-analytics service (Python,
// modules/data-analytics/app/experimentation) so the API can answer FeatBit's
// UI with FeatBit's numbers:
//
//   - Variance: p(1−p) for conversions (the population form, as
//     BinomialVariation computes it), the sample variance for numeric metrics
//     (var_samp over per-user sums).
//   - The relative lift δ = (μt−μc)/μc with the delta-method variance
//     σt²/(nt μc²) + σc² μt²/(nc μc⁴), Welch–Satterthwaite df,
//     p = 2(1−T_df(|t|)), CI = δ ± T_df⁻¹(1−α/2)·√var.
//   - FeatBit's checks, in its order and with its strings (including its
//     spelling "traitement"): fewer than 30 users in either group, an empty
//     control, an empty treatment, the baseline row, p ≥ α, then the power
//     check: n_t must reach ceil(statsmodels.tt_ind_solve_power) for Cohen's d
//     = |μt−μc| / pooled sample SD at power 0.8, ratio n_t/n_c, two-sided. The
//     power is the noncentral t's two tails (Lenth 1989, AS 243, summed from
//     the Poisson mode), and n is found by bracketing and bisection.
//   - The winner: among significant rows sorted by δ, with Lower the most
//     negative if negative, else the most positive if positive (so with Lower
//     and only positive lifts the largest still wins, as in FeatBit). Rows come
//     back significant-by-δ first, then the rest in Input order.
//   - Format prints a number as numpy.format_float_positional(v, precision=5,
//     trim='-').
//
// These are FeatBit's statistics, kept for compatibility; they are not sound
// under peeking, and the power check uses the observed effect (post-hoc power).
//
// # Bunting
//
// Analyze is the analysis Bunting stands behind:
//
//   - Sample ratio mismatch: Pearson's chi-square goodness of fit of the users
//     per variation against the expected shares, flagged below 0.001 (as
//     GrowthBook and Eppo, strict because it is checked at every look).
//   - Fixed horizon: Welch's t on the relative lift with the delta-method
//     variance and unbiased variances (for conversions p(1−p)·n/(n−1)), two-sided
//     p-value and 1−α interval. Valid only when read once, at a planned end.
//   - Always valid: the asymptotic confidence sequence of Waudby-Smith,
//     Arbour, Sinha, Kennedy and Ramdas, "Time-uniform central limit theory and
//     asymptotic confidence sequences" (arXiv 2103.06476, 2023 revision),
//     the two-sided normal-mixture boundary of Howard, Ramdas, McAuliffe and
//     Sekhon (Ann. Statist. 2021) applied to the delta-method estimate of the
//     lift, as GrowthBook does. After n users in both groups, with σ² = n·SE²,
//     the half-width is σ·√(2(nρ²+1)/(n²ρ²)·ln(√(nρ²+1)/α)), where
//     ρ² = (−2 ln α + ln(1−2 ln α))/S makes it narrowest at the planned total
//     S (Input.PlannedUsers, default 5,000 as GrowthBook). Its dual always-valid
//     p-value is min(1, √(nρ²+1)·exp(−nρ² z²/(2(nρ²+1)))), z = lift/SE; the
//     interval excludes 0 exactly when that p-value is below its level. The
//     chance that it ever excludes the true lift, over all looks, is at most α
//     (asymptotically), so results may be read at any time.
//   - Several variations: Holm's step-down adjustment (Holm 1979) of the
//     fixed-horizon and of the always-valid p-values over the m non-baseline
//     variations (a variation without a p-value still counts in m), and
//     sequential intervals at the Bonferroni level α/m, so the family-wise
//     error over all variations and all looks stays within α.
//   - Chance to beat the baseline: Φ(lift/SE), or Φ(−lift/SE) when Lower is
//     better; the posterior probability under a flat prior on the lift with
//     a normal likelihood.
//
// Lifts need at least MinUsers users in the variation and in the baseline and
// a non-zero baseline mean; below that every inferential field is nil.
//
// The package's tests check every number against formulas written out in the
// tests and integrated numerically there, or against published values, and
// simulate A/A experiments read 50 times to measure the false-positive rates
// (see README.md).
package stats
