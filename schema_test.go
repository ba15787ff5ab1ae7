package toolenv

import (
	"encoding/json"
	"testing"
)

func TestSchemaRoundTripKeepsOrderAndExtras(t *testing.T) {
	in := `{"type":"object","properties":{"zeta":{"type":"string","description":"last letter <z>"},"alpha":{"type":["integer","null"],"default":0},"mid":{"type":"string","enum":["a","b"],"x-enum-descriptions":{"a":"first"}}},"required":["zeta"],"additionalProperties":false,"x-custom":1}`
	var s Schema
	if err := json.Unmarshal([]byte(in), &s); err != nil {
		t.Fatal(err)
	}
	if got := s.Names(); len(got) != 3 || got[0] != "zeta" || got[1] != "alpha" || got[2] != "mid" {
		t.Fatalf("order = %v", got)
	}
	if a := s.Prop("alpha"); a.Type != "integer" || !a.Nullable || a.Default == nil {
		t.Fatalf("alpha = %+v", a)
	}
	out, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	var s2 Schema
	if err := json.Unmarshal(out, &s2); err != nil {
		t.Fatal(err)
	}
	out2, _ := json.Marshal(&s2)
	if string(out) != string(out2) {
		t.Fatalf("not stable:\n%s\n%s", out, out2)
	}
	if s2.Prop("mid").Extra["x-enum-descriptions"] == nil || s2.Extra["x-custom"] == nil {
		t.Fatalf("extras lost: %s", out)
	}
	if string(s2.AdditionalProperties) != "false" {
		t.Fatalf("additionalProperties = %s", s2.AdditionalProperties)
	}
	c := s2.Clone()
	c.DeleteProp("zeta")
	if s2.Prop("zeta") == nil || c.Prop("zeta") != nil || c.IsRequired("zeta") {
		t.Fatal("Clone is not deep, or DeleteProp did not remove")
	}
}

func TestSchemaRejectsNonObject(t *testing.T) {
	var s Schema
	if err := json.Unmarshal([]byte(`[1,2]`), &s); err == nil {
		t.Fatal("want an error for an array schema")
	}
	if err := json.Unmarshal([]byte(`{"properties":{"a":3}}`), &s); err == nil {
		t.Fatal("want an error for a non-object property schema")
	}
}

func FuzzSchemaUnmarshal(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"string"}}}`))
	f.Add([]byte(`{"type":["null"],"items":{"enum":[1,"x"]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Schema
		if err := json.Unmarshal(data, &s); err != nil {
			return
		}
		out, err := json.Marshal(&s)
		if err != nil {
			t.Fatalf("unmarshalled schema does not marshal: %v", err)
		}
		var s2 Schema
		if err := json.Unmarshal(out, &s2); err != nil {
			t.Fatalf("marshalled schema does not unmarshal: %s: %v", out, err)
		}
	})
}
