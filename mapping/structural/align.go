package structural

import "math"

// assign solves the assignment problem on a score matrix (rows × cols):
// it returns, for each row, the column that maximises the total score of
// a one-to-one assignment, or -1 for rows left unassigned (when there are
// more rows than columns). It is the Hungarian algorithm with potentials,
// O(n²m) for n ≤ m.
func assign(score [][]float64) []int {
	n := len(score)
	if n == 0 {
		return nil
	}
	m := len(score[0])
	if m == 0 {
		out := make([]int, n)
		for i := range out {
			out[i] = -1
		}
		return out
	}
	if n > m {
		t := make([][]float64, m)
		for j := range t {
			t[j] = make([]float64, n)
			for i := 0; i < n; i++ {
				t[j][i] = score[i][j]
			}
		}
		colOfRow := assign(t)
		out := make([]int, n)
		for i := range out {
			out[i] = -1
		}
		for j, i := range colOfRow {
			if i >= 0 {
				out[i] = j
			}
		}
		return out
	}
	// Minimise cost = -score; arrays are 1-based as in the classic
	// formulation.
	u := make([]float64, n+1)
	v := make([]float64, m+1)
	p := make([]int, m+1)
	way := make([]int, m+1)
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		minv := make([]float64, m+1)
		used := make([]bool, m+1)
		for j := range minv {
			minv[j] = math.Inf(1)
		}
		for {
			used[j0] = true
			i0 := p[j0]
			delta := math.Inf(1)
			j1 := 0
			for j := 1; j <= m; j++ {
				if used[j] {
					continue
				}
				cur := -score[i0-1][j-1] - u[i0] - v[j]
				if cur < minv[j] {
					minv[j] = cur
					way[j] = j0
				}
				if minv[j] < delta {
					delta = minv[j]
					j1 = j
				}
			}
			for j := 0; j <= m; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
			if j0 == 0 {
				break
			}
		}
	}
	out := make([]int, n)
	for i := range out {
		out[i] = -1
	}
	for j := 1; j <= m; j++ {
		if p[j] > 0 {
			out[p[j]-1] = j - 1
		}
	}
	return out
}
