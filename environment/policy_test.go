package environment

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/server"
)

// served opens cfg and serves its HTTP front-ends on loopback.
func served(t *testing.T, cfg *Config) (*Environment, string) {
	t.Helper()
	env, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	h, err := env.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return env, srv.URL
}

// reported is what GET /collections says of one collection's policy.
func reported(t *testing.T, base, name string) server.CollectionPolicy {
	t.Helper()
	resp, err := http.Get(base + "/collections")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list []struct {
		Name   string                  `json:"name"`
		Policy server.CollectionPolicy `json:"policy"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	for _, c := range list {
		if c.Name == name {
			return c.Policy
		}
	}
	t.Fatalf("/collections lists no %s: %+v", name, list)
	return server.CollectionPolicy{}
}

// post calls a tool through the REST front-end and returns the answer.
func post(t *testing.T, base, collection, tool string, args map[string]any) (status int, ans map[string]any) {
	t.Helper()
	body, _ := json.Marshal(args)
	resp, err := http.Post(base+"/tools/"+collection+"/"+tool, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	json.Unmarshal(raw, &ans)
	return resp.StatusCode, ans
}

// observedFeedback classifies how a rejected call was answered.
func observedFeedback(ans map[string]any) string {
	msg, _ := ans["error"].(string)
	hint, _ := ans["hint"].(string)
	switch {
	case hint != "":
		return toolenv.FeedbackHelpful
	case strings.HasPrefix(msg, "invalid arguments: "):
		return toolenv.FeedbackTerse
	case msg == "invalid arguments":
		return toolenv.FeedbackNone
	}
	return "unknown: " + fmt.Sprint(ans)
}

// TestCollectionsReportsTheFeedbackInForce crosses every feedback level a
// collection.json may give with every level --feedback may set, and
// checks that GET /collections reports the level a rejected call is then
// answered with (and says when the configuration set it).
func TestCollectionsReportsTheFeedbackInForce(t *testing.T) {
	c, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	levels := []string{"", toolenv.FeedbackNone, toolenv.FeedbackTerse, toolenv.FeedbackHelpful}
	for _, own := range levels {
		dir := filepath.Join(t.TempDir(), "demo")
		cc := *c
		cc.Policy.Feedback = own
		if err := toolenv.WriteCollection(dir, &cc); err != nil {
			t.Fatal(err)
		}
		for _, flag := range levels {
			t.Run(fmt.Sprintf("collection %q, flag %q", own, flag), func(t *testing.T) {
				_, base := served(t, &Config{Collections: []string{dir}, Feedback: flag})
				status, ans := post(t, base, "demo", "current_weather", map[string]any{"town": "Paris"})
				if status != http.StatusBadRequest {
					t.Fatalf("status %d: %v", status, ans)
				}
				got, p := observedFeedback(ans), reported(t, base, "demo")
				if p.Feedback != got {
					t.Errorf("/collections says feedback %q, a rejected call is answered %q", p.Feedback, got)
				}
				if _, set := p.SetBy["feedback"]; set != (flag != "") {
					t.Errorf("set_by %v with --feedback %q", p.SetBy, flag)
				}
			})
		}
	}
}

// TestCollectionsReportsTheDriftModeInForce serves a drifted demo in each
// mode its collection.json may give, under each --drift-mode, and checks
// that the mode /collections reports is the one enforced: an old call is
// refused (strict) or translated (compat). It also checks the lineage,
// the fault rules that apply and the simulator it reports.
func TestCollectionsReportsTheDriftModeInForce(t *testing.T) {
	c, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	faults := `{"seed": 3, "rules": [{"collection": "demo", "tool": "get_*", "latency": {"fixed": "1ms"}}, {"collection": "other", "errors": {"rate": 1}}, {"tool": "*", "latency": {"fixed": "1ms"}}]}`
	for _, own := range []string{drift.ModeStrict, drift.ModeCompat} {
		dir := filepath.Join(t.TempDir(), "demo")
		d, err := drift.Drift(drift.NewLineage(c), drift.Options{Seed: 7, Mode: own, Operators: []string{"endpoint"}, Rates: map[string]float64{"endpoint": 1}})
		if err != nil {
			t.Fatal(err)
		}
		if err := drift.Write(dir, d, drift.WriteOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
		var old *toolenv.Tool
		for _, tl := range c.Tools {
			if now, _, _ := d.Lineage.Manifest.Forward("v1", tl.Name, nil); now != tl.Name && len(tl.Examples) > 0 {
				old = tl
				break
			}
		}
		if old == nil {
			t.Fatal("the drift renamed no tool with an example")
		}
		for _, flag := range []string{"", drift.ModeStrict, drift.ModeCompat} {
			t.Run(own+" under --drift-mode "+flag, func(t *testing.T) {
				_, base := served(t, &Config{Collections: []string{dir}, Drift: DriftConfig{Mode: flag}, Faults: faults})
				status, ans := post(t, base, "demo", old.Name, old.Examples[0].Args)
				enforced := drift.ModeStrict
				if status == http.StatusOK {
					enforced = drift.ModeCompat
				}
				p := reported(t, base, "demo")
				if p.Mode != enforced {
					t.Errorf("/collections says mode %q; an old call was answered %d %v", p.Mode, status, ans)
				}
				if p.Drift == nil || p.Drift.Version != "v2" || p.Drift.BaseVersion != "v1" {
					t.Errorf("drift %+v, want v2 over v1", p.Drift)
				}
				if len(p.Faults) != 2 || p.FaultSeed == nil || *p.FaultSeed != 3 {
					t.Errorf("faults %v seed %v: want the two rules that may hit demo, seed 3", p.Faults, p.FaultSeed)
				}
				if p.Simulator == nil || p.Simulator.Model != "offline synthesizer" {
					t.Errorf("simulator %+v", p.Simulator)
				}
			})
		}
	}
}
