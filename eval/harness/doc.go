// Package harness runs an evaluation as toolenv eval does, from a Config
// (tasks, agent, model, judge) and the environment's configuration: it
// loads the tasks, opens the environment in-process (environment.Open) or
// talks to a running server, records every model and judge exchange for
// replay, runs the episodes (eval.Run) and writes the reports
// (eval/report), recording toolenv's version and the effective
// configuration.
//
//	ev, err := harness.Prepare(ctx, &cfg, &envCfg, harness.Options{Logger: log})
//	if err != nil { ... }
//	defer ev.Close()
//	res, err := ev.Run(ctx)
//
// Config's fields are also toolenv eval's flags and the keys of the eval
// section of a configuration file (see package environment for the tags).
// File is the whole configuration file: the environment's keys and that
// section.
package harness
