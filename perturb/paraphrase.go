package perturb

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/toolenv/toolenv/llm"
)

// paraphrasePrompt asks for a meaning-preserving paraphrase.
const paraphrasePrompt = `You rewrite requests that users send to an assistant.
Paraphrase the user's request: say the same thing in other words, as a person might write it.
Keep the meaning exactly. Keep every name, number, date, code, identifier and quoted text exactly as written.
Do not answer the request and do not add anything. Reply with the paraphrased request only.`

// paraphrase asks the model for a paraphrase that keeps every value of q,
// retrying (warmer each time) up to opts.Attempts; it returns q itself,
// variant "failed", when none does.
func paraphrase(ctx context.Context, q string, opts Options, rng *rand.Rand, rep *Report) (string, string, error) {
	vals := Extract(q)
	seed := int64(rng.Uint64() >> 1)
	var why []string
	for a := 0; a < opts.Attempts; a++ {
		req := &llm.Request{
			Model:       opts.ModelName,
			Messages:    []llm.Message{{Role: "system", Content: paraphrasePrompt}, {Role: "user", Content: q}},
			Temperature: llm.Float(0.7 + 0.15*float64(a)),
			Seed:        llm.Int(seed + int64(a)),
		}
		rep.Attempts++
		resp, err := opts.Model.Chat(ctx, req)
		if err != nil {
			return "", "", fmt.Errorf("perturb: paraphrase: %w", err)
		}
		p := cleanParaphrase(resp.Text())
		switch missing := Missing(vals, p); {
		case p == "":
			why = append(why, "empty")
		case strings.EqualFold(p, q):
			why = append(why, "unchanged")
		case len(missing) > 0:
			why = append(why, "lost "+strings.Join(missing, ", "))
		default:
			return p, fmt.Sprintf("attempt:%d", a+1), nil
		}
		rep.Rejected++
		rep.Rejection[reasonKind(why[len(why)-1])]++
	}
	rep.Failed++
	return q, "failed", nil
}

func reasonKind(why string) string {
	if strings.HasPrefix(why, "lost") {
		return "lost a value"
	}
	return why
}

// cleanParaphrase strips what models wrap answers in: quotes, a
// "Paraphrase:" label, surrounding space.
func cleanParaphrase(s string) string {
	unquote := func(s string) string {
		s = strings.TrimSpace(s)
		if len(s) >= 2 && ((s[0] == '"' && s[len(s)-1] == '"') || (s[0] == '\'' && s[len(s)-1] == '\'')) {
			s = strings.TrimSpace(s[1 : len(s)-1])
		}
		return s
	}
	s = unquote(s)
	for _, p := range []string{"Paraphrase:", "Paraphrased request:", "Rewritten request:"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			s = strings.TrimSpace(s[len(p):])
		}
	}
	return unquote(s)
}
