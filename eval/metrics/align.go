package metrics

// Pair is one aligned position of two sequences: indexes into the gold
// and predicted sequences.
type Pair struct{ Gold, Pred int }

// AlignLCS aligns two sequences on a longest common subsequence of equal
// elements and returns the matched positions in order. Among alignments of
// the same length it prefers the earliest matches, so the result is
// deterministic.
func AlignLCS[T comparable](gold, pred []T) []Pair {
	n, m := len(gold), len(pred)
	// dp[i][j] is the LCS length of gold[i:] and pred[j:].
	dp := make([][]int32, n+1)
	for i := range dp {
		dp[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case gold[i] == pred[j]:
				dp[i][j] = dp[i+1][j+1] + 1
			case dp[i+1][j] >= dp[i][j+1]:
				dp[i][j] = dp[i+1][j]
			default:
				dp[i][j] = dp[i][j+1]
			}
		}
	}
	var out []Pair
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case gold[i] == pred[j] && dp[i][j] == dp[i+1][j+1]+1:
			out = append(out, Pair{i, j})
			i, j = i+1, j+1
		case dp[i][j+1] >= dp[i+1][j]:
			j++
		default:
			i++
		}
	}
	return out
}
