package environment

import (
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/internal/redact"
	"github.com/toolenv/toolenv/server"

	toolenv "github.com/toolenv/toolenv"
)

// PolicyOf returns the policy in force for calls to collection c (GET
// /collections reports it): its collection.json policy with what the
// configuration overrides — the feedback level, a drifted collection's
// mode — and what the configuration adds: faults that may hit it,
// failover, repair, the simulator answering a virtual collection, the
// call timeout. SetBy names every value the configuration set.
func (env *Environment) PolicyOf(c *toolenv.Collection) server.CollectionPolicy {
	cfg := &env.Config
	p := server.PolicyFromCollection(c)
	set := map[string]string{}
	backend := c.Backend.Type // what answers (a drifted collection's base's backend)
	if cfg.Feedback != "" {
		p.Feedback, set["feedback"] = cfg.Feedback, env.option("feedback")
	}
	if drift.IsDrifted(c) {
		p.Mode = c.Policy.Mode
		if p.Mode != drift.ModeCompat {
			p.Mode = drift.ModeStrict
		}
		if cfg.Drift.Mode != "" {
			p.Mode, set["mode"] = cfg.Drift.Mode, env.option("drift.mode")
		}
		p.Drift = &server.DriftPolicy{Version: c.Version}
		if b, ok := env.Registry.Backend(c.Name).(*driftBackend); ok {
			p.Drift.BaseVersion = b.lineage.Manifest.BaseVersion
			backend = b.lineage.Base.Backend.Type
		}
	}
	if env.faults != nil {
		for _, r := range env.faults.RulesFor(c.Name) {
			p.Faults = append(p.Faults, r)
		}
		if len(p.Faults) > 0 {
			seed := env.faults.Seed
			p.FaultSeed, set["faults"] = &seed, env.option("faults")
		}
	}
	if cfg.Failover.Mappings != "" {
		p.Failover, set["failover"] = true, env.option("failover.mappings")
	}
	if opt, ok := env.repairs[c.Name]; ok {
		p.Repair, set["repair"] = true, opt
	}
	if backend == "" || backend == "virtual" {
		sp := &server.SimulatorPolicy{OnFailure: cfg.Simulator.OnFailure}
		if cfg.Upstream.URL != "" {
			sp.Upstream = redact.URL(cfg.Upstream.URL)
		} else if cfg.Upstream.Direct {
			sp.Upstream = "each API's own host"
		}
		if cfg.Simulator.URL != "" {
			sp.Endpoint, sp.Model, sp.Prompt = redact.URL(cfg.Simulator.URL), cfg.Simulator.Model, cfg.Simulator.Prompt
		} else {
			sp.OnFailure = "" // the synthesizer answers first
			sp.Model = "offline synthesizer"
		}
		p.Simulator = sp
	}
	if cfg.Timeout > 0 {
		p.Timeout = cfg.Timeout.String()
	}
	if len(set) > 0 {
		p.SetBy = set
	}
	return p
}
