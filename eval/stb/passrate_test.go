package stb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPassRateLabelsAsEvalPassRate: eval_pass_rate.py scores a round 1
// only for exactly "AnswerStatus.Solved" and 0.5 for exactly
// "AnswerStatus.Unsure"; a bare "Solved" (as some judges' files hold)
// scores 0. Round keys go through Python's int(), the later of two keys
// naming one round winning.
func TestPassRateLabelsAsEvalPassRate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "labels.json")
	writeFile(t, path, `{
 "1": {"is_solved": {"0": "Solved", "1": "AnswerStatus.Solved"}},
 "2": {"is_solved": {"0": "AnswerStatus.Solved", "1": "Unsure"}},
 "3": {"is_solved": {"0": "AnswerStatus.Unsure", "1": "solved"}},
 "4": {"is_solved": {"0": "AnswerStatus.Unsolved", " 1": "AnswerStatus.Solved", "01": "AnswerStatus.Unsolved"}}
}`)
	f, err := ReadPassRate(path)
	if err != nil {
		t.Fatal(err)
	}
	got, problems := SolvePassRate(f, 0)
	// round 0: (0 + 1 + 0.5 + 0) / 4; round 1: (1 + 0 + 0 + 0) / 4
	if len(got.PerRound) != 2 || got.PerRound[0] != 0.375 || got.PerRound[1] != 0.25 || got.Mean != 31.25 || got.Std != 6.25 {
		t.Errorf("SolvePassRate = %+v, want rounds [0.375 0.25], 31.25 ± 6.25", got)
	}
	if len(problems) != 3 || !strings.Contains(fmt.Sprint(problems), `label "Solved" is not one eval_pass_rate.py counts`) {
		t.Errorf("problems = %v, want the three labels eval_pass_rate.py does not count", problems)
	}
}

// TestPassRateNoLabels: a file with nothing to score is an error saying
// so, never 0.0 %.
func TestPassRateNoLabels(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"empty": "", "space": " \n", "object": "{}"} {
		path := filepath.Join(dir, name+".json")
		writeFile(t, path, text)
		if _, err := ReadPassRate(path); !errors.Is(err, ErrNoLabels) || !strings.Contains(err.Error(), "no labels") {
			t.Errorf("%s: ReadPassRate error = %v, want ErrNoLabels", name, err)
		}
	}
	path := filepath.Join(dir, "rounds.json")
	writeFile(t, path, `{"1": {"is_solved": {}}, "2": {"query": "q"}}`)
	f, err := ReadPassRate(path)
	if err != nil {
		t.Fatal(err)
	}
	got, problems := SolvePassRate(f, 0)
	if len(got.PerRound) != 0 || got.Tasks != 2 || len(problems) != 1 {
		t.Errorf("no label in any round: %+v, problems %v; want no rounds and the missing is_solved reported", got, problems)
	}
}

// TestSolvePassRateMatchesPython scores generated label files with
// toolenv and with testdata/sopr_reference.py (eval_pass_rate.py's
// arithmetic in the Python standard library) and wants the same figures:
// labels in every spelling judges and files use, labels that are not
// strings, round keys Python's int() reads differently from strconv, rounds
// missing, repeated and beyond --evaluate_times.
func TestSolvePassRateMatchesPython(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 (the standard library only) is needed to run StableToolBench's arithmetic: ", err)
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(9, 15))
	type job struct {
		Path  string `json:"path"`
		Times int    `json:"times"`
	}
	var jobs []job
	for i := 0; i < 300; i++ {
		path := filepath.Join(dir, fmt.Sprintf("%03d.json", i))
		writeFile(t, path, genPassRateFile(rng))
		jobs = append(jobs, job{path, 1 + rng.IntN(5)}) // toolenv reads 0 as "the rounds recorded"
	}
	in, _ := json.Marshal(jobs)
	cmd := exec.Command(python, filepath.Join("testdata", "sopr_reference.py"))
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sopr_reference.py: %v", err)
	}
	var want []struct {
		Mean, Std float64
		PerRound  []float64 `json:"per_round"`
		Error     string
	}
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(jobs) {
		t.Fatalf("sopr_reference.py printed %d results (%v): %.300s", len(want), err, out)
	}
	scored := 0
	for i, j := range jobs {
		w := want[i]
		text, _ := os.ReadFile(j.Path)
		f, err := ReadPassRate(j.Path)
		if w.Error != "" {
			// Python stops (no queries, no rounds, a round int() rejects,
			// an entry without is_solved); toolenv reports instead.
			var problems []error
			var got struct{ PerRound []float64 }
			if err == nil {
				r, p := SolvePassRate(f, j.Times)
				got.PerRound, problems = r.PerRound, p
			}
			if err == nil && len(problems) == 0 && len(got.PerRound) > 0 {
				t.Errorf("%s (times %d): Python stops with %s; toolenv scored it without a problem\n%s", j.Path, j.Times, w.Error, text)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v\n%s", j.Path, err, text)
			continue
		}
		got, _ := SolvePassRate(f, j.Times)
		scored++
		if len(got.PerRound) != len(w.PerRound) || math.Abs(got.Mean-w.Mean) > 1e-9 || math.Abs(got.Std-w.Std) > 1e-9 {
			t.Errorf("%s (times %d): toolenv %+v, eval_pass_rate.py %+v\n%s", j.Path, j.Times, got, w, text)
		}
	}
	if scored < 150 {
		t.Errorf("only %d of %d generated files were scorable by Python; the generator drifted", scored, len(jobs))
	}
}

// genPassRateFile writes a pass-rate results file with adversarial labels
// and round keys.
func genPassRateFile(rng *rand.Rand) string {
	labels := []string{`"AnswerStatus.Solved"`, `"AnswerStatus.Unsolved"`, `"AnswerStatus.Unsure"`,
		`"Solved"`, `"Unsure"`, `"solved"`, `"AnswerStatus.Solved "`, `"answerstatus.solved"`, `""`, `null`, `1`, `true`}
	rounds := []string{"0", "1", "2", "3", "4", "5", "01", " 1", "+2", "1_0", "-0", "-1", "٣", "0\t"}
	var b strings.Builder
	b.WriteString("{")
	n := rng.IntN(6)
	if rng.IntN(40) == 0 {
		n = 0
	}
	for q := 0; q < n; q++ {
		if q > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n %q: {\"query\": \"q%d\", \"is_solved\": {", fmt.Sprint(rng.IntN(8)), q)
		k := rng.IntN(5)
		for r := 0; r < k; r++ {
			if r > 0 {
				b.WriteString(", ")
			}
			key := rounds[rng.IntN(4)]
			if rng.IntN(3) == 0 {
				key = rounds[rng.IntN(len(rounds))]
			}
			if rng.IntN(60) == 0 {
				key = "x" // int() raises
			}
			fmt.Fprintf(&b, "%q: %s", key, labels[rng.IntN(len(labels))])
		}
		b.WriteString("}}")
	}
	b.WriteString("\n}")
	return b.String()
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// FuzzPassRateFile: reading any pass-rate file never panics; a file read
// is scored without panicking, and written back and read again it gives
// the same labels in every round.
func FuzzPassRateFile(f *testing.F) {
	for _, s := range []string{
		`{"1": {"is_solved": {"0": "AnswerStatus.Solved", " 1": "Solved", "01": null}}}`,
		`{"1": {"query": "q", "is_solved": {"+2": "AnswerStatus.Unsure", "1_0": 1, "٣": true}}, "1": {}}`,
		`{}`, ``, `[1]`, `{"1": {"is_solved": []}}`, `{"1": {"is_solved": {"0": "AnswerStatus.Solved", "0": "x"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "in.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		pf, err := ReadPassRate(path)
		if err != nil {
			return
		}
		labels, _ := pf.Labels()
		SolvePassRate(pf, 3)
		out := filepath.Join(dir, "out.json")
		if err := WritePassRate(out, pf); err != nil {
			t.Fatal(err)
		}
		again, err := ReadPassRate(out)
		if err != nil {
			t.Fatalf("written file does not read back: %v", err)
		}
		labels2, _ := again.Labels()
		if fmt.Sprint(labels) != fmt.Sprint(labels2) {
			t.Fatalf("labels changed in a write/read round trip:\n%v\n%v", labels, labels2)
		}
	})
}

// FuzzPyInt: Python's int() of a plain decimal is its value, with space
// around, a sign, and underscores between digits; nothing panics.
func FuzzPyInt(f *testing.F) {
	for _, s := range []string{"0", " 1 ", "+2", "-3", "1_0", "01", "٣", "1__0", "_1", "", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := pyInt(s)
		if v, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && v < 1<<40 && v > -(1<<40) && strings.TrimSpace(s) == strings.Trim(s, " \t\n\r\v\f") {
			if !ok || n != v {
				t.Fatalf("pyInt(%q) = %d, %v; want %d", s, n, ok, v)
			}
		}
	})
}
