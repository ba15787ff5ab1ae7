package simulate

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// The fingerprints were computed from the prompt texts of StableToolBench's
// server/system_prompts.py and server/main.py (the SFT prompt also equals
// the system turn of the MirrorAPI benchmark's rendered prompts). A
// changed byte — a trimmed trailing space, a re-wrapped line — breaks them.
func TestPromptsAreExact(t *testing.T) {
	cases := []struct {
		name, text, sha string
		runes           int
	}{
		{"SFT", SFTSystemPrompt, "8cdc5f128160a2146e872e815cf15c81e73c05670ddd74fd649e28fcffef06ec", 2888},
		{"CoT", CoTSystemPrompt, "16f56b555444f8aaab2378e009d33fa5d77453f015f9f06dffdd8a50a050f5fd", 2949},
		{"GPT", GPTSystemPrompt, "23788f0767fbdbcec8ee8bc144bb0a446c73b3371ce56e13820d2fe9c336f8a0", 1676},
	}
	for _, tc := range cases {
		sum := sha256.Sum256([]byte(tc.text))
		if got := hex.EncodeToString(sum[:]); got != tc.sha {
			t.Errorf("%s prompt changed: sha256 %s, want %s", tc.name, got, tc.sha)
		}
		if n := len([]rune(tc.text)); n != tc.runes {
			t.Errorf("%s prompt has %d characters, want %d", tc.name, n, tc.runes)
		}
	}
	if !strings.HasPrefix(CoTSystemPrompt, "[CHAIN_OF_THOUGHT]\n") || !strings.Contains(CoTSystemPrompt, `"mechanism_of_the_api": ""`) {
		t.Error("the CoT prompt must start with its mode tag and ask for mechanism_of_the_api")
	}
	if !strings.Contains(SFTSystemPrompt, "functionality. \nThe key") {
		t.Error("the SFT prompt lost its trailing space")
	}
}
