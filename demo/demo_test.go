package demo

import (
	"testing"

	"github.com/toolenv/toolenv/validate"
)

func TestDemoIsWellFormed(t *testing.T) {
	c, err := Collection()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tools) != 6 || c.Backend.Type != "virtual" || c.Policy.Validation != "strict" {
		t.Fatalf("collection = %+v with %d tools", c, len(c.Tools))
	}
	var v validate.Validator
	for _, tool := range c.Tools {
		if tool.Output == nil || len(tool.Examples) < 2 || tool.Binding == nil || tool.Description == "" {
			t.Errorf("%s is under-documented", tool.Name)
		}
		for _, ex := range tool.Examples {
			if out := v.Args(tool.Input, ex.Args, false); len(out.Problems) > 0 {
				t.Errorf("%s example %v is not a valid call: %+v", tool.Name, ex.Args, out.Problems)
			}
		}
	}
	tasks, err := Tasks()
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		for _, g := range task.Gold {
			if c.Tool(g.Name) == nil {
				t.Errorf("task %s uses unknown tool %s", task.ID, g.Name)
			}
		}
	}
	// A fresh copy each time: callers may change it.
	c2, _ := Collection()
	c2.Tools[0].Name = "changed"
	if c3, _ := Collection(); c3.Tools[0].Name == "changed" {
		t.Fatal("Collection returns shared state")
	}
}
