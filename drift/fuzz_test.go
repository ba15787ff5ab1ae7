package drift

import (
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
)

// FuzzManifest checks that any manifest either fails its checks or
// replays over the demo tools and translates calls without panicking:
// a hand-edited or corrupt manifest is an error, never a crash.
func FuzzManifest(f *testing.F) {
	c, err := demo.Collection()
	if err != nil {
		f.Fatal(err)
	}
	seeds := []string{
		`{"format":1,"collection":"demo","base_version":"v1","version":"v2","steps":[{"from":"v1","to":"v2","tools":[{"tool":"current_weather","name":"current_weather","changes":[{"op":"rename_param","param":"city","to":"town"}]}]}]}`,
		`{"format":1,"collection":"demo","base_version":"v1","version":"v2","steps":[{"from":"v1","to":"v2","tools":[{"tool":"get_book","name":"fetch_book","stub":"get_book","changes":[{"op":"rename_tool","from":"get_book","to":"fetch_book"},{"op":"nest","param":"o","members":[{"param":"isbn","key":"i"},{"param":"x","key":"y"}]}]}]}]}`,
		`{"format":1,"collection":"demo","base_version":"v1","version":"v2","steps":[{"from":"v1","to":"v2","tools":[{"tool":"search_books","name":"search_books","changes":[{"op":"retype","param":"limit","from_type":"integer","to_type":"string"},{"op":"flip_default","param":"limit","old_value":"5","new_value":"10"},{"op":"rename_field","path":"results[]","from":"isbn","to":"code"}]}]}]}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		var m Manifest
		if toolenv.DecodeJSON([]byte(data), &m) != nil || m.Check() != nil {
			return
		}
		if _, err := m.Replay(c.Tools); err != nil {
			return
		}
		for _, tool := range c.Tools {
			for _, ex := range tool.Examples {
				name, args, err := m.Forward(m.BaseVersion, tool.Name, ex.Args)
				if err != nil {
					t.Fatal(err)
				}
				m.BackwardAlternatives(name, args)
				m.ForwardBody(tool.Name, ex.Response)
			}
		}
	})
}
