package bench_test

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"testing"

	"github.com/credohq/credo/internal/dbtest"
)

// BenchmarkCodeMargins: how deep a compact code's order must be read for an exact
// re-rank to find the true k nearest, on BenchmarkSearchAtScale's clustered scopes (the
// same generator, the same queries). For each query, the scope's active beliefs are
// ordered by the code's distance to the query's code, then by id, as the database would
// order them; the depth is the position of the last of the true k nearest (by exact
// cosine distance) in that order. Reported: its median, p99 and maximum over the
// queries, for k 10 (a ranked read) and 24 (the extraction's candidates), for two codes:
//   - bit: binary_quantize, 1 bit a dimension compared by Hamming distance;
//   - half: halfvec, 16 bits a dimension compared by cosine distance;
//   - half256: halfvec of the first 256 dimensions alone (pgvector's subvector), a
//     third of the bytes at 768 dimensions; on these synthetic vectors, whose
//     dimensions are alike, as good as any projection to 256, while embedders trained
//     to be cut (Matryoshka, as nomic-embed-text v1.5) keep more in their first ones.
//
// Pure Go: no database. Issue 35 asked for a read of codes re-ranked exactly, the
// depth set from these margins.
func BenchmarkCodeMargins(b *testing.B) {
	for _, dim := range benchInts(b, "CREDO_BENCH_DIMS", benchSizes([]int{768}, []int{64})) {
		for _, n := range benchInts(b, "CREDO_BENCH_SCOPES", benchSizes([]int{1_000, 10_000}, []int{200})) {
			b.Run(fmt.Sprintf("dim=%d/beliefs=%d", dim, n), func(b *testing.B) {
				sc := newSearchScope(dim, n, searchTopicsOf(dim))
				var rows []codedRow
				for i, v := range sc.vecs {
					if sc.active[i] {
						rows = append(rows, codedRow{i: len(rows), vec: v, bit: bitCode(v), half: halfCode(v), trunc: truncCode(v)})
					}
				}
				depths := map[string][]int{}
				for range b.N {
					clear(depths)
					for _, q := range sc.queries {
						for name, d := range codeDepths(q, rows) {
							depths[name] = append(depths[name], d)
						}
					}
				}
				for name, ds := range depths {
					slices.Sort(ds)
					b.ReportMetric(float64(ds[len(ds)/2]), name+"_p50")
					b.ReportMetric(float64(ds[int(0.99*float64(len(ds)-1))]), name+"_p99")
					b.ReportMetric(float64(ds[len(ds)-1]), name+"_max")
				}
			})
		}
	}
}

// codedRow is an active belief with its codes.
type codedRow struct {
	i    int
	vec  []float32
	bit  []uint64
	half []float32
	// trunc is the halfvec of the first truncDim dimensions.
	trunc []float32
	// Distances to the query at hand.
	exact, bitDist, halfDist, truncDist float64
}

// codeDepths is, for query q, the depth of the true k nearest in each code's order,
// named "<code>_k<k>_depth".
func codeDepths(q []float32, rows []codedRow) map[string]int {
	qbit, qhalf, qtrunc := bitCode(q), halfCode(q), truncCode(q)
	for j := range rows {
		r := &rows[j]
		r.exact = dbtest.CosineDistance(q, r.vec)
		h := 0
		for w := range qbit {
			h += bits.OnesCount64(qbit[w] ^ r.bit[w])
		}
		r.bitDist = float64(h)
		r.halfDist = dbtest.CosineDistance(qhalf, r.half)
		r.truncDist = dbtest.CosineDistance(qtrunc, r.trunc)
	}
	out := map[string]int{}
	byExact := slices.Clone(rows)
	slices.SortFunc(byExact, func(a, b codedRow) int { return cmp.Or(cmp.Compare(a.exact, b.exact), cmp.Compare(a.i, b.i)) })
	for _, code := range []struct {
		name string
		dist func(codedRow) float64
	}{
		{"bit", func(r codedRow) float64 { return r.bitDist }},
		{"half", func(r codedRow) float64 { return r.halfDist }},
		{fmt.Sprintf("half%d", truncDim), func(r codedRow) float64 { return r.truncDist }},
	} {
		order := slices.Clone(rows)
		slices.SortFunc(order, func(a, b codedRow) int {
			return cmp.Or(cmp.Compare(code.dist(a), code.dist(b)), cmp.Compare(a.i, b.i))
		})
		pos := make([]int, len(rows))
		for p, r := range order {
			pos[r.i] = p + 1
		}
		for _, k := range []int{searchRankedK, searchCandidateK} {
			deepest := 0
			for _, r := range byExact[:min(k, len(byExact))] {
				deepest = max(deepest, pos[r.i])
			}
			out[fmt.Sprintf("%s_k%d_depth", code.name, k)] = deepest
		}
	}
	return out
}

// bitCode is binary_quantize of v: bit i set when v[i] > 0.
func bitCode(v []float32) []uint64 {
	c := make([]uint64, (len(v)+63)/64)
	for i, x := range v {
		if x > 0 {
			c[i/64] |= 1 << (i % 64)
		}
	}
	return c
}

// halfCode is v as halfvec stores it: each component rounded to the nearest float16
// (10 bits of mantissa, ties to even). Components below float16's normal range (6.1e-5;
// a tenth of a percent of a unit vector's at 768 dimensions) keep more precision here
// than there, which moves no depth measurably.
// truncDim is how many of its first dimensions the half256 code keeps.
const truncDim = 256

// truncCode is the halfvec of v's first truncDim dimensions.
func truncCode(v []float32) []float32 { return halfCode(v[:min(truncDim, len(v))]) }

func halfCode(v []float32) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		const drop = 23 - 10
		u := math.Float32bits(x)
		u += 1<<(drop-1) - 1 + (u>>drop)&1
		out[i] = math.Float32frombits(u &^ (1<<drop - 1))
	}
	return out
}
