package mirror_test

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// model is the stand-in for a hosted model: an OpenAI-compatible server
// on loopback (llmtest) that answers each of the engine's prompts the way
// chat models answer them — mostly as asked, sometimes in a code fence,
// with the prompt's typographic quotes or as a Python dict, sometimes
// with the wrong API, garbage or a refusal. Which answer a request gets
// depends only on the request, so a replay sees the same answers.
type model struct {
	srv   *llmtest.Server
	mu    sync.Mutex
	kinds map[string]int // requests per prompt kind
	// clean answers every scenario request well (the benchmark's
	// stand-in, whose cost per pair should not include bad rounds).
	clean bool
	// temps and seeds hold the temperatures and seeds asked, per kind.
	temps map[string]map[float64]bool
	seeds map[string]map[int64]bool
}

func newModel(t interface{ Cleanup(func()) }) *model {
	m := &model{kinds: map[string]int{}, temps: map[string]map[float64]bool{}, seeds: map[string]map[int64]bool{}}
	m.srv = llmtest.New(m.answer)
	t.Cleanup(m.srv.Close)
	return m
}

func (m *model) count(kind string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.kinds[kind]
}

// asked returns the temperatures and the number of distinct seeds of the
// requests of a kind.
func (m *model) asked(kind string) (temps []float64, seeds int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for t := range m.temps[kind] {
		temps = append(temps, t)
	}
	sort.Float64s(temps)
	return temps, len(m.seeds[kind])
}

func hashOf(parts ...string) uint32 {
	h := fnv.New32a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	x := h.Sum32() // FNV's low bits mix poorly: finish as MurmurHash3 does
	x ^= x >> 16
	x *= 0x85ebca6b
	x ^= x >> 13
	x *= 0xc2b2ae35
	x ^= x >> 16
	return x
}

func (m *model) answer(n int, req *llm.Request) llmtest.Reply {
	var system, user, prev string
	for _, msg := range req.Messages {
		switch msg.Role {
		case "system":
			system = msg.Content
		case "user":
			user = msg.Content
		case "assistant":
			prev = msg.Content
		}
	}
	seed := ""
	if req.Seed != nil {
		seed = strconv.FormatInt(*req.Seed, 10)
	}
	h := hashOf(user, prev, seed)
	kind := "other"
	var text string
	switch {
	case strings.HasPrefix(system, "We have a bunch of APIs"):
		kind, text = "doc", docAnswer(user, h)
	case strings.Contains(user, "Can you write a call to test if the API is reachable"):
		kind, text = "call", callAnswer(user, prev, h)
	case strings.Contains(user, "realistic situations in which someone would use this API"):
		var bad string
		kind = "scenarios"
		text, bad = scenarioAnswer(user, seed, m.clean)
		if bad != "" {
			m.mu.Lock()
			m.kinds["scenarios:"+bad]++
			m.mu.Unlock()
		}
	case strings.Contains(user, "new request-response pairs for this API"):
		kind, text = "synthesize", synthAnswer(user, h)
	case strings.HasPrefix(user, "I have an API and call this API with a specific request"):
		kind, text = "explain", explainAnswer(user, h)
	case strings.HasPrefix(user, "You will be provided with several tools"):
		kind, text = "query", queryAnswer(user, h)
	case strings.HasPrefix(user, "An AI agent used some APIs"):
		kind, text = "functioning", functioningAnswer(user, h)
	case strings.HasPrefix(system, "Answer the user's question with the tools below"):
		kind, text = "agent", agentAnswer(system, req.Messages)
	}
	m.mu.Lock()
	m.kinds[kind]++
	if m.temps == nil {
		m.temps, m.seeds = map[string]map[float64]bool{}, map[string]map[int64]bool{}
	}
	if m.temps[kind] == nil {
		m.temps[kind], m.seeds[kind] = map[float64]bool{}, map[int64]bool{}
	}
	if req.Temperature != nil {
		m.temps[kind][*req.Temperature] = true
	}
	if req.Seed != nil {
		m.seeds[kind][*req.Seed] = true
	}
	m.mu.Unlock()
	return llmtest.Reply{Content: text}
}

var countRE = regexp.MustCompile(`JSON list of (\d+)`)

// scenarioAnswer writes the scenarios, except that one request in nine
// is refused, one answered with prose and one with an empty list; bad
// says which.
func scenarioAnswer(user, seed string, clean bool) (text, bad string) {
	switch h := hashOf(user, seed, "scenarios") % 9; {
	case clean:
	case h == 0:
		return "I'm sorry, but I can't help with that request.", "refused"
	case h == 1:
		return "Sure! 1) A traveller checks the weather. 2) A farmer plans the harvest.", "unparseable"
	case h == 2:
		return "```json\n[]\n```", "unparseable"
	}
	n := 3
	if m := countRE.FindStringSubmatch(user); m != nil {
		n, _ = strconv.Atoi(m[1])
	}
	var list []string
	for i := range n {
		city := cities[int(hashOf(user, seed, strconv.Itoa(i)))%len(cities)]
		days := 1 + int(hashOf(seed, strconv.Itoa(i)))%5
		trip, _ := strconv.Atoi(seed)
		list = append(list, fmt.Sprintf("You are a travel planner preparing a %d-day trip to %s for a group of students (trip %d). You need the weather for each day to decide which museums to visit indoors and when to walk outside. You will check the forecast before booking.", days, city, trip*n+i))
	}
	b, _ := json.MarshalIndent(list, "", "  ")
	return "Here are the scenarios:\n```json\n" + string(b) + "\n```", ""
}

var docRE = regexp.MustCompile(`"api_name": "([^"]*)"`)

func callAnswer(user, scenario string, h uint32) string {
	api := ""
	if m := docRE.FindStringSubmatch(user); m != nil {
		api = m[1]
	}
	var city string
	days := 1
	for _, c := range cities {
		if strings.Contains(scenario, c) {
			city = c
		}
	}
	if m := regexp.MustCompile(`a (\d)-day trip`).FindStringSubmatch(scenario); m != nil {
		days, _ = strconv.Atoi(m[1])
	}
	if m := regexp.MustCompile(`\(trip (\d+)\)`).FindStringSubmatch(scenario); m != nil {
		trip, _ := strconv.Atoi(m[1])
		h = uint32(trip) // every variant in turn, one per trip
	}
	input := fmt.Sprintf(`{"city": "%s", "days": %d}`, city, days)
	if !strings.Contains(user, `"name": "city"`) {
		input = fmt.Sprintf(`{"q": "%s"}`, strings.ToLower(city))
	}
	switch h % 20 {
	case 0:
		return "I think the API is reachable."
	case 1:
		return "I'm sorry, but I can't help with writing API calls."
	case 2:
		return fmt.Sprintf(`{"category": "Weather", "tool_name": "weather_service", "api_name": "Another API", "tool_input": %q, "strip": "filter"}`, input)
	case 3, 4:
		return "Sure! Here is the call:\n```json\n" + fmt.Sprintf(`{"category": "Weather", "tool_name": "weather_service", "api_name": %q, "tool_input": %q, "strip": "filter"}`, api, input) + "\n```"
	case 5:
		return fmt.Sprintf("{‘‘category’’:‘‘Weather’’, ‘‘tool_name’’:‘‘weather_service’’, ‘‘api_name’’:‘‘%s’’, ‘‘tool_input’’:‘%s’, ‘‘strip’’:‘‘filter’’,}", api, input)
	case 6:
		return fmt.Sprintf(`{'category': 'Weather', 'tool_name': 'weather_service', 'api_name': '%s', 'tool_input': %s, 'strip': 'filter'}`, api, strings.ReplaceAll(input, `"`, "'"))
	}
	return fmt.Sprintf(`{"category": "Weather", "tool_name": "weather_service", "api_name": %q, "tool_input": %q, "strip": "filter"}`, api, input)
}

func docAnswer(user string, h uint32) string {
	switch {
	case h%17 == 0:
		return "Looks fine to me."
	case strings.Contains(user, `"days": []`) || h%7 == 3:
		return `{"overall_eval": 0, "reason": "The documentation promises a forecast per day, the response holds none."}`
	case h%5 == 0:
		return "{‘‘overall_eval’’:1, ‘‘reason’’:‘‘The response follows the documentation.’’}"
	}
	return "```json\n{\"overall_eval\": 1, \"reason\": \"The response is a forecast as documented.\"}\n```"
}

var examplesRE = regexp.MustCompile(`(?s)returned:\n(\[.*\])\n\nWrite`)

func synthAnswer(user string, h uint32) string {
	if h%11 == 0 {
		return "I cannot produce more examples without more context."
	}
	n := 3
	if m := countRE.FindStringSubmatch(user); m != nil {
		n, _ = strconv.Atoi(m[1])
	}
	var exs []map[string]any
	if m := examplesRE.FindStringSubmatch(user); m != nil {
		json.Unmarshal([]byte(m[1]), &exs)
	}
	if len(exs) == 0 {
		return "[]"
	}
	var out []map[string]any
	out = append(out, exs[0]) // a duplicate of a real pair
	if len(exs) > 1 {
		c := map[string]any{"request": exs[1]["request"], "error": "", "response": map[string]any{"changed": true}}
		out = append(out, c) // the same request, another answer
	}
	for i := 0; len(out) < n; i++ {
		city := cities[int(h+uint32(i))%len(cities)]
		days := 1 + i%5
		req := map[string]any{"city": city, "days": days}
		var resp any = map[string]any{"city": city, "days": []any{map[string]any{"day": 1, "min": 7, "max": 17, "summary": "rain"}}}
		if _, isForecast := exs[0]["request"].(map[string]any)["city"]; !isForecast {
			req = map[string]any{"q": fmt.Sprintf("%s-%d", strings.ToLower(city), i)}
			resp = exs[0]["response"]
		}
		out = append(out, map[string]any{"request": req, "error": "", "response": resp})
	}
	out = append(out, map[string]any{"note": "not a pair"})
	b, _ := json.Marshal(out)
	return string(b)
}

var responseRE = regexp.MustCompile(`(?s)API Response: (.*)$`)

func explainAnswer(user string, h uint32) string {
	switch h % 25 {
	case 0:
		return "I'm sorry, I can't explain this API."
	case 1:
		return strings.Repeat("The API reads the city and the number of days, then looks each day up in a table of forecasts and formats it. ", 200)
	case 2, 3, 4, 5:
		resp := ""
		if m := responseRE.FindStringSubmatch(user); m != nil {
			resp = m[1]
		}
		return "The API returns exactly this: " + resp
	}
	return "The API takes the city and the number of days, looks the city up in its forecast store and returns one entry per day with the lowest and highest temperature and a short summary; an unknown city gives an empty list of days, and a call without a city is refused with a message naming the missing parameter."
}

var inputRE = regexp.MustCompile(`(?s)INPUT: (\[.*\]) OUTPUT:`)

func queryAnswer(user string, h uint32) string {
	if h%9 == 0 {
		return "Here is a query: find the weather."
	}
	var tools []struct {
		ToolName string `json:"tool_name"`
		APIList  []struct {
			Name string `json:"name"`
		} `json:"api_list"`
	}
	if m := inputRE.FindStringSubmatch(user); m != nil {
		json.Unmarshal([]byte(m[1]), &tools)
	}
	var related [][]string
	var names []string
	for _, t := range tools {
		for _, a := range t.APIList {
			related = append(related, []string{t.ToolName, a.Name})
			names = append(names, a.Name)
		}
	}
	b, _ := json.Marshal(map[string]any{"query": "I am visiting Paris next week: use " + strings.Join(names, " and ") + " to plan my days.", "related_apis": related})
	return "Let me think about related API combinations first.\n" + string(b)
}

func functioningAnswer(user string, h uint32) string {
	if h%7 == 0 {
		return "All good."
	}
	_, calls, _ := strings.Cut(user, "# API calls:")
	if strings.Contains(calls, "doesn't exists") || strings.Contains(calls, "not subscribed") {
		return `{"all_functioning": 0, "broken_apis": ["missing"], "reason": "An API answered that it does not exist."}`
	}
	return `{"all_functioning": 1, "broken_apis": [], "reason": "Every API answered."}`
}

var toolNamesRE = regexp.MustCompile(`one of \[([^\]]*)\]`)

// agentAnswer plays a ReAct agent: it calls each offered tool once, then
// answers.
func agentAnswer(system string, msgs []llm.Message) string {
	var names []string
	if m := toolNamesRE.FindStringSubmatch(system); m != nil {
		names = strings.Split(m[1], ", ")
	}
	done := 0
	for _, m := range msgs {
		if m.Role == "user" && strings.HasPrefix(m.Content, "Observation:") {
			done++
		}
	}
	if done >= len(names) {
		return "Thought: I now know the final answer\nFinal Answer: Paris will be partly cloudy all week."
	}
	return fmt.Sprintf("Thought: I will call %s.\nAction: %s\nAction Input: {\"city\": \"Paris\", \"q\": \"a\"}", names[done], names[done])
}
