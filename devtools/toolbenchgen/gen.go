package toolbenchgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/toolenv/toolenv/toolbench"
)

// Version changes whenever the generator's output for the same Options
// does; a set kept on disk is named with it.
const Version = 1

// Options say how large a set to generate.
type Options struct {
	// APIs is how many APIs the set holds (default 1,000). ToolBench's
	// full set has 49,937.
	APIs int
	// Seed selects the set; the same seed and APIs give the same bytes.
	Seed uint64
}

func (o Options) apis() int {
	if o.APIs <= 0 {
		return 1000
	}
	return o.APIs
}

// ToolFile is one generated tool: the file toolenv/tools/<Category>/<Name>.json.
type ToolFile struct {
	// Category is the folder the file sits in (ToolBench's category).
	Category string
	// Name is the file's name without ".json" (the standardized tool name).
	Name string
	// Doc is the file's content.
	Doc ToolDoc
}

// ToolDoc is a ToolBench tool file as RapidAPI's crawl wrote them.
type ToolDoc struct {
	ProductID        string   `json:"product_id"`
	ToolDescription  string   `json:"tool_description"`
	HomeURL          string   `json:"home_url"`
	Name             string   `json:"name"`
	Title            string   `json:"title"`
	Pricing          string   `json:"pricing"`
	ToolName         string   `json:"tool_name"`
	Score            *Score   `json:"score"`
	Host             string   `json:"host"`
	APIList          []APIDoc `json:"api_list"`
	StandardizedName string   `json:"standardized_name"`
}

// Score is RapidAPI's quality score of a tool.
type Score struct {
	AvgServiceLevel int     `json:"avgServiceLevel"`
	AvgLatency      int     `json:"avgLatency"`
	AvgSuccessRate  int     `json:"avgSuccessRate"`
	PopularityScore float64 `json:"popularityScore"`
	Typename        string  `json:"__typename"`
}

// APIDoc is one API of a tool file.
type APIDoc struct {
	Name               string               `json:"name"`
	URL                string               `json:"url"`
	Description        string               `json:"description"`
	Method             string               `json:"method"`
	RequiredParameters []toolbench.ParamDoc `json:"required_parameters"`
	OptionalParameters []toolbench.ParamDoc `json:"optional_parameters"`
	Code               string               `json:"code"`
	TestEndpoint       any                  `json:"test_endpoint"`
	TemplateResponse   json.RawMessage      `json:"template_response,omitempty"`
}

// Tools yields the set's tools in order. Tool i depends only on the seed,
// i and the names of the tools before it (names are made unique), so a
// larger set begins with a smaller one's tools.
func Tools(opts Options) iter.Seq[*ToolFile] {
	return func(yield func(*ToolFile) bool) {
		g := &generator{used: map[string]bool{}}
		left := opts.apis()
		for i := 0; left > 0; i++ {
			r := rand.New(rand.NewPCG(opts.Seed, uint64(i)*0x9e3779b97f4a7c15+1))
			tf := g.tool(r, i, left)
			left -= len(tf.Doc.APIList)
			if !yield(tf) {
				return
			}
		}
	}
}

// Docs returns the set as the API docs toolbench.Load would read from
// its files.
func Docs(opts Options) []toolbench.APIDoc {
	out := make([]toolbench.APIDoc, 0, opts.apis())
	for tf := range Tools(opts) {
		for _, a := range tf.Doc.APIList {
			out = append(out, toolbench.APIDoc{
				CategoryName: tf.Category, ToolName: tf.Doc.ToolName, APIName: a.Name, APIDescription: a.Description,
				RequiredParameters: a.RequiredParameters, OptionalParameters: a.OptionalParameters, Method: a.Method,
				TemplateResponse: a.TemplateResponse, URL: a.URL, ToolDescription: tf.Doc.ToolDescription, Host: tf.Doc.Host,
			})
		}
	}
	return out
}

// Marshal returns the file's bytes: indented JSON, as ToolBench ships them.
func (tf *ToolFile) Marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "    ")
	if err := enc.Encode(&tf.Doc); err != nil {
		return nil, fmt.Errorf("toolbenchgen: tool %s: %w", tf.Name, err)
	}
	return b.Bytes(), nil
}

type generator struct {
	used map[string]bool // standardized tool names given out
}

func (g *generator) tool(r *rand.Rand, i, left int) *ToolFile {
	cat := categories.pick(r)
	name := toolName(r, toolNameLen.n(r))
	std := toolbench.Standardize(name)
	for try := 0; (std == "" || g.used[std]) && try < 3; try++ { // another draw of the same length
		name = toolName(r, len(name))
		std = toolbench.Standardize(name)
	}
	for base, n := name, 2; std == "" || g.used[std]; n++ { // RapidAPI's own way: "Instagram_v2"
		name = base + "_v" + strconv.Itoa(n)
		std = toolbench.Standardize(name)
	}
	g.used[std] = true
	host := strings.ReplaceAll(std, "_", "-") + ".p.rapidapi.com"
	doc := ToolDoc{
		ProductID:       fmt.Sprintf("api_%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff),
		ToolDescription: text(r, toolDescLen.n(r)),
		HomeURL:         "https://rapidapi.com/" + strings.ReplaceAll(std, "_", "") + "/api/" + strings.ReplaceAll(std, "_", "-"),
		Name:            name,
		Title:           name,
		Pricing:         []string{"FREE", "FREEMIUM", "PAID"}[r.IntN(3)],
		ToolName:        name,
		Score: &Score{AvgServiceLevel: 90 + r.IntN(11), AvgLatency: 50 + r.IntN(3000), AvgSuccessRate: 50 + r.IntN(51),
			PopularityScore: float64(r.IntN(100)) / 10, Typename: "Score"},
		Host:             host,
		StandardizedName: std,
	}
	n := min(max(apisPerTool.n(r), 1), left)
	apiSeen := map[string]bool{}
	var pool []toolbench.ParamDoc // the tool's parameters so far: its APIs share some
	for range n {
		api := apiName(r, apiNameLen.n(r))
		for base, k := api, 2; toolbench.APIName(api) == "" || apiSeen[toolbench.APIName(api)]; k++ {
			api = base + " " + strconv.Itoa(k)
		}
		apiSeen[toolbench.APIName(api)] = true
		a := apiDoc(r, host, api, pool, doc.APIList)
		pool = append(append(pool, a.RequiredParameters...), a.OptionalParameters...)
		doc.APIList = append(doc.APIList, a)
	}
	return &ToolFile{Category: cat, Name: std, Doc: doc}
}

func apiDoc(r *rand.Rand, host, name string, pool []toolbench.ParamDoc, prev []APIDoc) APIDoc {
	a := APIDoc{
		Name:               name,
		URL:                "https://" + host + "/" + urlPath(name),
		Description:        text(r, apiDescLen.n(r)),
		Method:             "GET",
		RequiredParameters: params(r, requiredN.n(r), nil, pool),
		TestEndpoint:       "",
	}
	a.OptionalParameters = params(r, optionalN.n(r), a.RequiredParameters, pool)
	if len(prev) > 0 && r.Float64() < sameInputShare {
		// The same parameters as another API of the tool.
		p := prev[r.IntN(len(prev))]
		a.RequiredParameters, a.OptionalParameters = p.RequiredParameters, p.OptionalParameters
	}
	if u := r.Float64(); u < templateShare.object {
		a.TemplateResponse = template(r, templateLen.n(r))
	} else if u >= templateShare.object+templateShare.absent {
		// JSON text cut short, as StableToolBench stores overlong ones.
		t := template(r, templateCut+1+r.IntN(3000))
		a.TemplateResponse, _ = json.Marshal(string(t[:min(len(t), templateCut)]))
	}
	a.Code = code(a, host)
	return a
}

// params documents n parameters, none named like one of before; some are
// the same as a parameter of pool (the tool's other APIs).
func params(r *rand.Rand, n int, before, pool []toolbench.ParamDoc) []toolbench.ParamDoc {
	out := make([]toolbench.ParamDoc, 0, n)
	seen := map[string]bool{}
	for _, p := range before {
		seen[toolbench.ParamName(p.Name)] = true
	}
	for range n {
		if len(pool) > 0 && r.Float64() < sharedShare {
			if p := pool[r.IntN(len(pool))]; !seen[toolbench.ParamName(p.Name)] {
				seen[toolbench.ParamName(p.Name)] = true
				out = append(out, p)
				continue
			}
		}
		if r.Float64() < commonShare {
			// A common name, with a description and example it often has.
			c := commonParams[commonRank.pick(r)]
			if !seen[toolbench.ParamName(c.name)] {
				seen[toolbench.ParamName(c.name)] = true
				p := toolbench.ParamDoc{Name: c.name, Type: c.typ, Description: commonDesc(c.name, r.IntN(3)), Default: pickOf(r, c.examples)}
				if r.IntN(6) == 0 { // or words of its own
					p.Description = text(r, paramDescLen.n(r))
				}
				if r.IntN(6) == 0 {
					p.Default = example(r, c.typ, defaultLen.n(r))
				}
				out = append(out, p)
				continue
			}
		}
		name := paramName(r, paramNameLen.n(r))
		for base, k := name, 2; seen[toolbench.ParamName(name)]; k++ {
			name = base + strconv.Itoa(k)
		}
		seen[toolbench.ParamName(name)] = true
		typ := paramTypes.pick(r)
		out = append(out, toolbench.ParamDoc{Name: name, Type: typ, Description: text(r, paramDescLen.n(r)), Default: example(r, typ, defaultLen.n(r))})
	}
	return out
}

// commonDesc is the k-th description a common parameter comes with: the
// same words wherever it appears, of a length drawn like any other.
func commonDesc(name string, k int) string {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * 1099511628211
	}
	r := rand.New(rand.NewPCG(h, uint64(k)))
	return text(r, paramDescLen.n(r))
}

// commonRank draws an index of commonParams with weight 1/(rank+1).
var commonRank = func() weighted[int] {
	idx := make([]int, len(commonParams))
	w := make([]float64, len(commonParams))
	for i := range idx {
		idx[i], w[i] = i, 1/float64(i+1)
	}
	return newWeighted(idx, w)
}()

// example is a parameter's example value: mostly a string, as in the
// data (numbers too are usually written as strings there).
func example(r *rand.Rand, typ string, n int) any {
	if n == 0 {
		return ""
	}
	switch typ {
	case "NUMBER":
		if r.IntN(6) == 0 {
			return r.IntN(pow10(min(n, 9)))
		}
		return digits(r, n)
	case "BOOLEAN":
		if r.IntN(2) == 0 {
			return "true"
		}
		return "false"
	case "DATE (YYYY-MM-DD)":
		return fmt.Sprintf("20%02d-%02d-%02d", r.IntN(30), 1+r.IntN(12), 1+r.IntN(28))
	}
	if n > 16 && r.IntN(3) == 0 {
		return token(r, n) // an id, a key, an encoded URL
	}
	return fit(r, n, func() string { return pickOf(r, nouns) })
}

func pow10(n int) int {
	x := 1
	for range n {
		x *= 10
	}
	return x
}

func digits(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	if n > 1 && b[0] == '0' {
		b[0] = '1'
	}
	return string(b)
}

const tokenChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_%"

func token(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = tokenChars[r.IntN(len(tokenChars))]
	}
	return string(b)
}

func pickOf(r *rand.Rand, words []string) string { return words[r.IntN(len(words))] }

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// fit joins words from next with sep... until the text is about n bytes
// long, then cuts it to exactly n (at most one word is cut).
func fit(r *rand.Rand, n int, next func() string) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(next())
	}
	s := b.String()
	return strings.TrimRight(s[:min(len(s), n)], " ")
}

// toolName is a tool's documented name of about n bytes, in one of the
// styles seen: "Live Golf Data", "BaseballApi", "TikTok_Solutions",
// "Yahoo Finance_v2".
func toolName(r *rand.Rand, n int) string {
	n = max(n, 3)
	var parts []string
	size := 0
	for size < n {
		var w string
		switch r.IntN(4) {
		case 0:
			w = pickOf(r, brands)
		case 1:
			w = pickOf(r, qualifiers)
		default:
			w = pickOf(r, nouns)
		}
		parts = append(parts, title(w))
		size += len(w) + 1
	}
	if len(parts) > 1 && size-n > n-(size-len(parts[len(parts)-1])-1) {
		parts = parts[:len(parts)-1] // closer to n without the last word
	}
	var s string
	switch u := r.IntN(10); {
	case u < 6:
		s = strings.Join(parts, " ")
	case u < 8:
		s = strings.Join(parts, "")
	case u < 9:
		s = strings.Join(parts, "_")
	default:
		s = strings.ToLower(strings.Join(parts, ""))
	}
	if r.IntN(20) == 0 {
		s += "_v2"
	}
	return s
}

// apiName is an API's documented name of about n bytes: "Get latest
// price", "/api/v2/categories", "getNewsletters", "stock/profile".
func apiName(r *rand.Rand, n int) string {
	n = max(n, 2)
	words := []string{pickOf(r, verbs)}
	if r.IntN(3) == 0 {
		words = []string{}
	}
	size := 0
	for _, w := range words {
		size += len(w) + 1
	}
	for size < n {
		w := pickOf(r, nouns)
		if r.IntN(4) == 0 {
			w = pickOf(r, qualifiers)
		}
		words = append(words, w)
		size += len(w) + 1
	}
	if len(words) > 1 && size-n > n-(size-len(words[len(words)-1])-1) {
		words = words[:len(words)-1] // closer to n without the last word
	}
	switch u := r.IntN(20); {
	case u < 11:
		words[0] = title(words[0])
		return strings.Join(words, " ")
	case u < 13:
		return "/" + strings.Join(words, "/")
	case u < 16:
		for i := 1; i < len(words); i++ {
			words[i] = title(words[i])
		}
		return strings.Join(words, "")
	default:
		return strings.Join(words, "_")
	}
}

var shortParams = []string{"q", "id", "ip", "to", "url", "lat", "lng", "page", "lang", "type", "date", "limit", "query", "symbol", "country", "offset"}

// paramName is a parameter name of about n bytes: "q", "page",
// "channel_id", "seriesId", "adminDivision2".
func paramName(r *rand.Rand, n int) string {
	if n <= 2 {
		for range 16 {
			if w := pickOf(r, shortParams); len(w) <= 3 {
				return w
			}
		}
	}
	if n <= 8 {
		for range 8 { // a word of about that length
			if w := pickOf(r, nouns); len(w) >= n-1 && len(w) <= n+1 {
				if r.IntN(3) == 0 {
					w = w[:max(1, n/2)] + title(pickOf(r, []string{"id", "no", "code", "type", "name", "key"}))
				}
				return w
			}
		}
	}
	first := pickOf(r, nouns)
	if len(first) >= n {
		return first
	}
	second := pickOf(r, append(nouns[:len(nouns):len(nouns)], "id", "name", "code", "type"))
	if r.IntN(2) == 0 {
		return first + "_" + second
	}
	return first + title(second)
}

// text is documentation prose of exactly n bytes (0: empty).
func text(r *rand.Rand, n int) string {
	if n == 0 {
		return ""
	}
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteString(". ")
		}
		words := 4 + r.IntN(10)
		for i := range words {
			var w string
			switch u := r.IntN(10); {
			case u < 4:
				w = pickOf(r, fillers)
			case u < 7:
				w = pickOf(r, nouns)
			case u < 9:
				w = pickOf(r, qualifiers)
			default:
				w = pickOf(r, verbs)
			}
			if i == 0 {
				w = title(w)
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
	}
	s := b.String()[:n]
	if t := strings.TrimRight(s, " ."); t != "" {
		return t + strings.Repeat(".", len(s)-len(t)) // keep the length
	}
	return s
}

// template is a template response object of about n bytes, keys in
// insertion order: {"status": "str", "data": [{"id": "int", "_list_length": 3}]}.
func template(r *rand.Rand, n int) json.RawMessage {
	var b bytes.Buffer
	writeObject(r, &b, max(n, 2), 0)
	return b.Bytes()
}

func writeObject(r *rand.Rand, b *bytes.Buffer, n, depth int) {
	start := b.Len()
	b.WriteByte('{')
	keys := map[string]bool{}
	for len(keys) == 0 || b.Len()-start < n-12 { // the next entry would mostly overshoot
		room := n - (b.Len() - start)
		k := pickOf(r, nouns)
		if r.IntN(5) < 2 || len(k)+10 > room {
			k = pickOf(r, jsonKeys) // the short keys most responses use
		}
		if room > 40 && r.IntN(3) == 0 {
			k += "_" + pickOf(r, []string{"id", "name", "url", "count", "type", "date", "code"})
		}
		if keys[k] {
			k += strconv.Itoa(len(keys))
		}
		keys[k] = true
		if len(keys) > 1 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(k))
		b.WriteString(": ")
		room = n - (b.Len() - start)
		switch u := r.IntN(10); {
		case depth < 4 && room > 60 && u < 2:
			writeObject(r, b, min(room-2, 20+r.IntN(room)), depth+1)
		case depth < 4 && room > 60 && u < 3:
			b.WriteByte('[')
			item := b.Len()
			writeObject(r, b, min(room-30, 20+r.IntN(room)), depth+1)
			// "_list_length" goes inside the item, before its closing brace.
			b.Truncate(b.Len() - 1)
			if b.Len() > item+1 {
				b.WriteString(", ")
			}
			b.WriteString(`"_list_length": ` + strconv.Itoa(1+r.IntN(20)) + "}]")
		default:
			b.WriteString(strconv.Quote(templateTypes.pick(r)))
		}
	}
	b.WriteByte('}')
}

// code is RapidAPI's Python snippet for the API, as tool files carry it.
func code(a APIDoc, host string) string {
	var qs []string
	for _, p := range a.RequiredParameters {
		qs = append(qs, fmt.Sprintf("%q:%q", p.Name, fmt.Sprint(p.Default)))
	}
	return fmt.Sprintf("import requests\n\nurl = %q\nquerystring = {%s}\n\nheaders = {\n            \"X-RapidAPI-Key\": \"SIGN-UP-FOR-KEY\",\n            \"X-RapidAPI-Host\": %q\n        }\n\nresponse = requests.get(url, headers=headers, params=querystring)\nprint(response.json())\n",
		a.URL, strings.Join(qs, ", "), host)
}

// urlPath is an API's URL path made from its name.
func urlPath(name string) string {
	s := strings.Trim(strings.ToLower(toolbench.Standardize(name)), "_")
	return strings.ReplaceAll(s, "_", "/")
}
