// Package stats computes experiment statistics from per-variation sums: FeatBit's
// results, reproduced exactly, and Bunting's own analysis, which stays valid
// when results are read while the experiment runs. It is pure: no database, no
// network.
package stats
