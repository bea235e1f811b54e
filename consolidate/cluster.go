package consolidate

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"

	"github.com/credohq/credo/memory"
)

// clusterize groups the beliefs that edges link with union-find, never letting a group
// grow past maxSize members. Edges are taken nearest first, so a cap cuts a chain of
// similar beliefs at its weakest links rather than wherever the edges happened to be
// listed. Groups of one are dropped: there is nothing to consolidate in them. The
// result depends only on the set of edges, so an unchanged scope clusters the same way
// twice and its clusters keep their signatures.
func clusterize(edges []memory.Neighbor, maxSize int) [][]int64 {
	edges = slices.Clone(edges)
	for i, e := range edges {
		if e.ID < e.Seed {
			edges[i].Seed, edges[i].ID = e.ID, e.Seed
		}
	}
	slices.SortFunc(edges, func(a, b memory.Neighbor) int {
		return cmp.Or(cmp.Compare(a.Distance, b.Distance), cmp.Compare(a.Seed, b.Seed), cmp.Compare(a.ID, b.ID))
	})

	uf := newUnionFind()
	for _, e := range edges {
		uf.union(e.Seed, e.ID, maxSize)
	}
	groups := map[int64][]int64{}
	for id := range uf.parent {
		root := uf.find(id)
		groups[root] = append(groups[root], id)
	}
	var out [][]int64
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		slices.Sort(g)
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b []int64) int { return cmp.Compare(a[0], b[0]) })
	return out
}

// unionFind is a disjoint-set forest over belief ids with union by size and path
// halving: near-constant time per edge, so clustering grows with the number of edges.
type unionFind struct {
	parent map[int64]int64
	size   map[int64]int
}

func newUnionFind() *unionFind {
	return &unionFind{parent: map[int64]int64{}, size: map[int64]int{}}
}

func (u *unionFind) find(id int64) int64 {
	if _, ok := u.parent[id]; !ok {
		u.parent[id], u.size[id] = id, 1
		return id
	}
	for u.parent[id] != id {
		u.parent[id] = u.parent[u.parent[id]]
		id = u.parent[id]
	}
	return id
}

// union joins the sets of a and b unless the joined set would have more than
// maxSize members.
func (u *unionFind) union(a, b int64, maxSize int) {
	ra, rb := u.find(a), u.find(b)
	if ra == rb || u.size[ra]+u.size[rb] > maxSize {
		return
	}
	if u.size[ra] < u.size[rb] {
		ra, rb = rb, ra
	}
	u.parent[rb] = ra
	u.size[ra] += u.size[rb]
}

// signature identifies a cluster by what the LLM was shown of it that can change: its
// members' ids and their valid_from (a restatement may move a belief's start). A
// belief's statement, attribute, kind and origin never change under its id (a
// correction is a new belief), so the ids stand for them. A cluster judged once is not
// sent again while its members are the same; any change of membership makes a new
// signature and a new judgment.
//
// No text goes into it: a digest of statements would give a purged or curated
// statement back to whoever guesses it (docs/design.md, "Consolidation").
func signature(members []memory.Belief) string {
	sorted := slices.SortedFunc(slices.Values(members), func(a, b memory.Belief) int { return cmp.Compare(a.ID, b.ID) })
	h := sha256.New()
	for _, m := range sorted {
		h.Write([]byte(strconv.FormatInt(m.ID, 10) + "@" + strconv.FormatInt(m.ValidFrom.UnixMicro(), 10) + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}
