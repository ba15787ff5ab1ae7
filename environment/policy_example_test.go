package environment_test

import (
	"context"
	"fmt"

	"github.com/toolenv/toolenv/environment"
)

// PolicyOf is the policy GET /collections reports: collection.json's,
// with what the configuration sets over it.
func ExampleEnvironment_PolicyOf() {
	ctx := context.Background()
	env, err := environment.Open(ctx, &environment.Config{Feedback: "terse"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer env.Close()
	p := env.PolicyOf(env.Registry.Collection("demo"))
	fmt.Println(p.Validation, p.Feedback, p.SetBy["feedback"], p.Simulator.Model)
	// Output: strict terse feedback (--feedback) offline synthesizer
}
