// Package oaslint runs the third-party OpenAPI checkers the tests hold
// toolenv's documents to — Redocly CLI's lint and swagger-parser's
// validate, as installed in testdata/npm (see internal/npmtest) — and
// reads their verdicts.
package oaslint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/toolenv/toolenv/internal/npmtest"
)

// Problem is one finding of Redocly's lint.
type Problem struct {
	// File is the linted file.
	File string
	// Rule is the rule's id ("struct", "security-defined").
	Rule string
	// Severity is "error" or "warn".
	Severity string
	// Message says what is wrong.
	Message string
	// Pointer is where, as a JSON pointer into File.
	Pointer string
}

// String shows the problem on one line.
func (p Problem) String() string {
	return fmt.Sprintf("%s %s %s%s: %s", p.Severity, p.Rule, filepath.Base(p.File), p.Pointer, p.Message)
}

// Report is what Redocly found in a set of files.
type Report struct {
	Problems []Problem
}

// Errors returns the problems of severity error.
func (r Report) Errors() []Problem { return r.of("error") }

// Warnings returns the problems of severity warn.
func (r Report) Warnings() []Problem { return r.of("warn") }

func (r Report) of(severity string) []Problem {
	var out []Problem
	for _, p := range r.Problems {
		if p.Severity == severity {
			out = append(out, p)
		}
	}
	return out
}

// Count counts the problems by severity and rule ("error security-defined").
func (r Report) Count() map[string]int {
	out := map[string]int{}
	for _, p := range r.Problems {
		out[p.Severity+" "+p.Rule]++
	}
	return out
}

// Summary lists the counts, sorted, one per line.
func (r Report) Summary() string {
	var lines []string
	for k, n := range r.Count() {
		lines = append(lines, fmt.Sprintf("%6d %s", n, k))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// Redocly lints files with Redocly CLI. args choose the rules: "--extends",
// "recommended" for the recommended ruleset as it is, or "--config", FILE.
// An exit status of 1 (problems found) is not an error; a report that
// does not parse is.
func Redocly(ctx context.Context, tools npmtest.Tools, args []string, files ...string) (Report, error) {
	cmdArgs := append([]string{"lint", "--format", "json", "--max-problems", "1000000"}, args...)
	cmdArgs = append(cmdArgs, files...)
	cmd := tools.Command(ctx, "redocly", cmdArgs...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return Report{}, fmt.Errorf("redocly lint: %w\n%s", err, stderr.String())
	}
	var rep Report
	dec := json.NewDecoder(&stdout)
	for {
		var out struct {
			Problems []struct {
				RuleID   string `json:"ruleId"`
				Severity string `json:"severity"`
				Message  string `json:"message"`
				Location []struct {
					Source struct {
						Ref string `json:"ref"`
					} `json:"source"`
					Pointer string `json:"pointer"`
				} `json:"location"`
			} `json:"problems"`
		}
		if err := dec.Decode(&out); err == io.EOF {
			break
		} else if err != nil {
			return Report{}, fmt.Errorf("redocly lint: its report does not parse: %w\n%s", err, stderr.String())
		}
		for _, p := range out.Problems {
			pr := Problem{Rule: p.RuleID, Severity: p.Severity, Message: p.Message}
			if len(p.Location) > 0 {
				pr.File, pr.Pointer = p.Location[0].Source.Ref, p.Location[0].Pointer
			}
			rep.Problems = append(rep.Problems, pr)
		}
	}
	if err != nil && len(rep.Problems) == 0 {
		return rep, fmt.Errorf("redocly lint failed without reporting a problem: %w\n%s", err, stderr.String())
	}
	return rep, nil
}

// swaggerParserScript validates each file named on its command line and
// prints one JSON line per file: {"file", "error"}. swagger-parser makes
// a new Ajv for every document, which compiles the OpenAPI schema again
// (half a second a document on a loaded machine); the script keeps one
// Ajv of each class, so that each schema is compiled once and the checks
// are the same.
const swaggerParserScript = `for (const name of ["ajv-draft-04", "ajv/dist/2020"]) {
  const path = require.resolve(name, { paths: [require.resolve("@apidevtools/swagger-parser")] });
  const Orig = require(path);
  let made;
  class Once extends Orig { constructor(opts) { if (made) return made; super(opts); made = this; } }
  Once.default = Once;
  require.cache[path].exports = Once;
}
const SwaggerParser = require("@apidevtools/swagger-parser");
(async () => {
  for (const file of process.argv.slice(2)) {
    let error = "";
    try { await SwaggerParser.validate(file); } catch (e) { error = String(e && e.message || e); }
    console.log(JSON.stringify({ file, error }));
  }
})();
`

// SwaggerParser validates files with @apidevtools/swagger-parser and
// returns, per file that fails, its message.
func SwaggerParser(ctx context.Context, tools npmtest.Tools, dir string, files ...string) (map[string]string, error) {
	script := filepath.Join(dir, "swagger-parser-validate.cjs")
	if err := os.WriteFile(script, []byte(swaggerParserScript), 0o644); err != nil {
		return nil, err
	}
	out, err := npmtest.Run(tools.Script(ctx, script, files...))
	if err != nil {
		return nil, err
	}
	failed := map[string]string{}
	n := 0
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var r struct{ File, Error string }
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		n++
		if r.Error != "" {
			failed[r.File] = r.Error
		}
	}
	if n != len(files) {
		return nil, fmt.Errorf("swagger-parser reported on %d of %d files:\n%s", n, len(files), out)
	}
	return failed, nil
}
