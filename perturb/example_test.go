package perturb_test

import (
	"context"
	"fmt"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/perturb"
)

func ExamplePerturb() {
	tasks := []*toolenv.Task{{ID: "demo-3", Query: "I have 100 euros. How many US dollars is that?"}}
	for _, mode := range []string{perturb.CaseMix, perturb.Punctuation} {
		out, _, _ := perturb.Perturb(context.Background(), tasks, perturb.Options{Mode: mode, Seed: 3})
		fmt.Printf("%s: %q\n", mode, out[0].Query)
	}
	v := perturb.Extract(tasks[0].Query)
	fmt.Println("numbers", v.Numbers, "entities", v.Entities)
	// Output:
	// case_mix: "i have 100 euros. how many us dollars is that?"
	// punctuation: "I; have 100 euros. How many US dollars is that??"
	// numbers [100] entities [US]
}
