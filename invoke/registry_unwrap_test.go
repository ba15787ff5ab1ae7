package invoke_test

import (
	"context"
	"fmt"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/invoke"
)

// base is a backend that offers a session method beyond Invoke.
type base struct{}

func (base) Invoke(context.Context, *toolenv.Call) *toolenv.Result { return &toolenv.Result{} }
func (base) DropSession(id string)                                 { fmt.Println("dropped", id) }

// wrapper hides base's methods but for Invoke, as a drifted
// collection's backend does.
type wrapper struct{ toolenv.Handler }

func (w wrapper) Unwrap() toolenv.Handler { return w.Handler }

// BackendAs finds what a base backend offers behind its wrappers.
func ExampleBackendAs() {
	var h toolenv.Handler = wrapper{wrapper{base{}}}
	if d, ok := invoke.BackendAs[interface{ DropSession(string) }](h); ok {
		d.DropSession("s1")
	}
	_, ok := invoke.BackendAs[interface{ Warm() }](h)
	fmt.Println("warm:", ok)
	// Output:
	// dropped s1
	// warm: false
}
