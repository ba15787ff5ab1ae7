package drift

import "testing"

func TestNestGroups(t *testing.T) {
	tool := mustTool(t, `{"name":"nearby","binding":{"method":"GET","path":"/places/{city}"},"input":{"type":"object","properties":{
	 "lat":{"type":"number"},"query":{"type":"string"},"lng":{"type":"number"},
	 "page":{"type":"integer"},"per_page":{"type":"integer"},
	 "city":{"type":"string"},"zipcode":{"type":"string"},
	 "start_date":{"type":"string"}},"required":["lat","lng","city"]}}`)
	cs, nt := planOp(t, "nest", tool, 1, 1, nil)
	if len(cs) != 2 || cs[0].Rule != "coordinates" || cs[1].Rule != "pagination" {
		t.Fatalf("changes: %s (want coordinates and pagination; the address has a path parameter, the date range one date)", mustJSON(cs))
	}
	if got := nt.Input.Names(); canonString(got) != `["coordinates","query","pagination","city","zipcode","start_date"]` {
		t.Errorf("order: %v", got)
	}
	if !nt.Input.IsRequired("coordinates") || nt.Input.IsRequired("pagination") {
		t.Errorf("required: %v", nt.Input.Required)
	}
	fwd := roundTrip(t, cs, nt, args(t, `{"lat":48.85,"lng":2.35,"city":"Paris","per_page":5}`))
	if canonString(fwd) != `{"city":"Paris","coordinates":{"lat":48.85,"lon":2.35},"pagination":{"size":5}}` {
		t.Errorf("forward: %s", canonString(fwd))
	}
	if cs, _ := planOp(t, "nest", mustTool(t, `{"name":"x","input":{"type":"object","properties":{"lat":{"type":"number"},"page":{"type":"integer"}}}}`), 1, 1, nil); len(cs) != 0 {
		t.Errorf("nested a lone latitude or page: %s", mustJSON(cs))
	}
}
