package demo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/internal/schemacheck"
)

// demoEnv serves the demo as toolenv serve does (virtual backend, offline
// synthesizer), in memory.
func demoEnv(t *testing.T) *environment.Environment {
	t.Helper()
	env, err := environment.Open(context.Background(), &environment.Config{Store: ":memory:"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	return env
}

// call invokes a demo tool and decodes its answer; the answer must
// conform to the tool's output schema.
func call(t *testing.T, env *environment.Environment, tool string, args map[string]any) map[string]any {
	t.Helper()
	c, res := env.Registry.NewCall("demo", tool, args)
	if res != nil {
		t.Fatalf("%s %v: %s", tool, args, res.Error)
	}
	r := env.Pipeline.Invoke(context.Background(), c)
	if !r.OK() {
		t.Fatalf("%s %v: %s %s", tool, args, r.Status, r.Error)
	}
	chk, err := schemacheck.Compile(c.Tool.Output)
	if err != nil {
		t.Fatal(err)
	}
	if p := chk.Check(r.Body); p != nil {
		t.Errorf("%s %v: the answer breaks its output schema: %v\n%s", tool, args, p, r.Body)
	}
	var out map[string]any
	d := json.NewDecoder(strings.NewReader(string(r.Body)))
	d.UseNumber()
	if err := d.Decode(&out); err != nil {
		t.Fatalf("%s %v: %v\n%s", tool, args, err, r.Body)
	}
	return out
}

func num(t *testing.T, v any) float64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v is not a number", v)
	}
	f, _ := n.Float64()
	return f
}

var codes = []string{"USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD"}

// TestDemoAnswersAgreeWithTheirArguments calls every demo tool with
// generated arguments — documented and unseen cities, every unit, every
// number of days, every pair of currencies and amounts, searches with
// limits, known and unknown ISBNs — and checks each answer against its
// arguments and against the other tools' answers: a forecast has as many
// consecutive days as asked, with highs not below lows; a temperature is
// in the unit asked, and one city's temperatures in the two units are the
// same temperature; a conversion's rate is the one exchange_rates gives
// and its result is the amount times the rate; the rates of every base
// are the cross rates of the dollar's; a search returns at most its
// limit and counts at least what it returns, each book as get_book
// describes it. Every answer conforms to its output schema.
func TestDemoAnswersAgreeWithTheirArguments(t *testing.T) {
	env := demoEnv(t)
	rng := rand.New(rand.NewPCG(29, 6))

	// Exchange rates: every base, the cross rates of the dollar's.
	rates := map[string]map[string]float64{}
	for _, base := range append([]string{""}, codes...) {
		args := map[string]any{}
		if base != "" {
			args["base"] = base
		}
		out := call(t, env, "exchange_rates", args)
		want := base
		if want == "" {
			want = "USD"
		}
		if out["base"] != want {
			t.Errorf("exchange_rates %v: base %v", args, out["base"])
		}
		rs, _ := out["rates"].(map[string]any)
		got := map[string]float64{}
		for _, c := range codes {
			v, ok := rs[c]
			if c == want {
				if ok {
					t.Errorf("exchange_rates base %s lists its own currency", want)
				}
				continue
			}
			if !ok {
				t.Errorf("exchange_rates base %s: no rate for %s: %v", want, c, rs)
				continue
			}
			got[c] = num(t, v)
		}
		got[want] = 1
		rates[want] = got
	}
	for _, a := range codes {
		for _, b := range codes {
			cross := rates["USD"][b] / rates["USD"][a]
			if r := rates[a][b]; math.Abs(r-cross) > 1e-4*cross {
				t.Errorf("the rate %s→%s is %v, but the dollar's rates make it %v", a, b, r, cross)
			}
		}
	}

	// Conversions: the rate of exchange_rates, the amount times the rate.
	for i := range 120 {
		from, to := codes[rng.IntN(len(codes))], codes[rng.IntN(len(codes))]
		amount := []any{json.Number("100"), json.Number("0"), json.Number("12.5"), json.Number("1000000"),
			json.Number(fmt.Sprint(rng.IntN(5000))), json.Number(fmt.Sprintf("%d.%02d", rng.IntN(900), rng.IntN(100)))}[i%6]
		out := call(t, env, "convert_currency", map[string]any{"amount": amount, "from": from, "to": to})
		if out["from"] != from || out["to"] != to || num(t, out["amount"]) != num(t, amount) {
			t.Errorf("convert %v %s→%s: echoes %v %v→%v", amount, from, to, out["amount"], out["from"], out["to"])
		}
		rate, result := num(t, out["rate"]), num(t, out["result"])
		if want := rates[from][to]; math.Abs(rate-want) > 1e-4*want {
			t.Errorf("convert %s→%s: rate %v, exchange_rates says %v", from, to, rate, want)
		}
		if want := num(t, amount) * rate; math.Abs(result-want) > 0.006 {
			t.Errorf("convert %v %s→%s: result %v, but %v × %v = %v", amount, from, to, result, amount, rate, want)
		}
	}

	// Current weather: the unit asked, one temperature in both units.
	cities := []string{"Paris", "Tokyo", "Oslo", "Berlin", "Rome", "São Paulo", "Paris,FR", "Reykjavík", "x"}
	for _, city := range cities {
		temps := map[string]float64{}
		for _, units := range []string{"", "metric", "imperial"} {
			args := map[string]any{"city": city}
			if units != "" {
				args["units"] = units
			} else {
				units = "metric"
			}
			out := call(t, env, "current_weather", args)
			if out["city"] != city || out["units"] != units {
				t.Errorf("current_weather %v: city %v, units %v", args, out["city"], out["units"])
			}
			temp := num(t, out["temperature"])
			lo, hi := -60.0, 55.0
			if units == "imperial" {
				lo, hi = -76, 131
			}
			if temp < lo || temp > hi {
				t.Errorf("current_weather %v: %v° is not a temperature in %s units", args, temp, units)
			}
			if h := num(t, out["humidity"]); h < 0 || h > 100 {
				t.Errorf("current_weather %v: humidity %v%%", args, h)
			}
			if w := num(t, out["wind"]); w < 0 {
				t.Errorf("current_weather %v: wind %v", args, w)
			}
			temps[units] = temp
		}
		if f, c := temps["imperial"], temps["metric"]; math.Abs(f-(c*9/5+32)) > 0.2 {
			t.Errorf("current_weather %s: %v°C in metric units but %v°F in imperial ones", city, c, f)
		}
	}

	// Forecasts: as many consecutive days as asked, highs over lows.
	for _, city := range cities {
		for days := 0; days <= 7; days++ {
			args := map[string]any{"city": city}
			want := 3
			if days > 0 {
				args["days"] = json.Number(fmt.Sprint(days))
				want = days
			}
			out := call(t, env, "weather_forecast", args)
			list, _ := out["days"].([]any)
			if out["city"] != city || len(list) != want {
				t.Errorf("weather_forecast %v: city %v, %d days, want %d", args, out["city"], len(list), want)
				continue
			}
			var prev time.Time
			for i, d := range list {
				day, _ := d.(map[string]any)
				date, err := time.Parse(time.DateOnly, fmt.Sprint(day["date"]))
				if err != nil {
					t.Errorf("weather_forecast %v: day %d: %v", args, i, err)
					continue
				}
				if i > 0 && !date.Equal(prev.AddDate(0, 0, 1)) {
					t.Errorf("weather_forecast %v: day %d is %s, after %s", args, i, date.Format(time.DateOnly), prev.Format(time.DateOnly))
				}
				prev = date
				if num(t, day["high"]) < num(t, day["low"]) {
					t.Errorf("weather_forecast %v: day %d: high %v below low %v", args, i, day["high"], day["low"])
				}
			}
		}
	}

	// Books: a search returns at most its limit, counts at least what it
	// returns, and describes each book as get_book does.
	books := map[string]map[string]any{}
	for _, isbn := range []string{"9780441172719", "9780441172696", "9780553293357"} {
		out := call(t, env, "get_book", map[string]any{"isbn": isbn})
		if out["isbn"] != isbn {
			t.Errorf("get_book %s: isbn %v", isbn, out["isbn"])
		}
		books[isbn] = out
	}
	for i := range 60 {
		query := []string{"dune", "foundation", "zzzz", "Dune", "messiah", "asimov", "the"}[i%7]
		args := map[string]any{"query": query}
		limit := 5
		if i%3 > 0 {
			limit = 1 + rng.IntN(20)
			args["limit"] = json.Number(fmt.Sprint(limit))
		}
		out := call(t, env, "search_books", args)
		results, _ := out["results"].([]any)
		if len(results) > limit || num(t, out["total"]) < float64(len(results)) {
			t.Errorf("search_books %v: %d results of %v, limit %d", args, len(results), out["total"], limit)
		}
		for _, r := range results {
			b, _ := r.(map[string]any)
			known, ok := books[fmt.Sprint(b["isbn"])]
			if !ok {
				continue
			}
			for _, k := range []string{"title", "author", "year"} {
				if fmt.Sprint(b[k]) != fmt.Sprint(known[k]) {
					t.Errorf("search_books %v lists %s with %s %v, get_book says %v", args, b["isbn"], k, b[k], known[k])
				}
			}
		}
	}
	for range 20 {
		isbn := fmt.Sprintf("978%010d", rng.Int64N(1e10))
		if out := call(t, env, "get_book", map[string]any{"isbn": isbn}); out["isbn"] != isbn {
			t.Errorf("get_book %s: isbn %v", isbn, out["isbn"])
		}
	}
	_ = toolenv.StatusOK
}
