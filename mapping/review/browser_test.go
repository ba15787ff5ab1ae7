package review

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolenv/toolenv/mapping"
)

// screenshot, when set, is where the browser test saves a picture of the
// page (docs/mapping-review.png is made so).
var screenshot = flag.String("screenshot", "", "save a screenshot of the review page to this PNG file")

// browser finds chromedriver and chromium. When they are missing the test
// fails under CI (which installs them with scripts/install-browser.sh) and
// is skipped elsewhere, saying how to install them.
func browser(t *testing.T) (driver, chromium string) {
	t.Helper()
	driver, err1 := exec.LookPath("chromedriver")
	chromium, err2 := exec.LookPath("chromium")
	if err1 == nil && err2 == nil {
		return driver, chromium
	}
	msg := "the review page's browser test needs chromium and chromedriver: run scripts/install-browser.sh (apt-get install chromium chromium-driver)"
	if os.Getenv("CI") != "" {
		t.Fatal("CI: " + msg)
	}
	t.Skip("skipped: " + msg)
	return "", ""
}

// webDriver speaks the W3C WebDriver protocol to chromedriver.
type webDriver struct {
	t       *testing.T
	base    string
	session string
}

func (w *webDriver) do(method, path string, body any) json.RawMessage {
	w.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, w.base+path, r)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatalf("webdriver %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out struct {
		Value json.RawMessage `json:"value"`
	}
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &out); err != nil || resp.StatusCode != 200 {
		w.t.Fatalf("webdriver %s %s: HTTP %d %s", method, path, resp.StatusCode, data)
	}
	return out.Value
}

func (w *webDriver) s(path string) string { return "/session/" + w.session + path }

// exec runs a script in the page and decodes its result into v.
func (w *webDriver) exec(v any, script string, args ...any) {
	w.t.Helper()
	if args == nil {
		args = []any{}
	}
	raw := w.do("POST", w.s("/execute/sync"), map[string]any{"script": script, "args": args})
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			w.t.Fatalf("script result %s: %v", raw, err)
		}
	}
}

// until polls a script until it returns true.
func (w *webDriver) until(what, script string) {
	w.t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // a hang guard, not a speed figure
	for {
		var ok bool
		w.exec(&ok, "return !!("+script+")")
		if ok {
			return
		}
		if time.Now().After(deadline) {
			var html string
			w.exec(&html, "return document.body.innerText.slice(0, 2000)")
			w.t.Fatalf("timed out waiting for %s; page:\n%s", what, html)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// W3C key codes.
const (
	keyEnter   = "\uE007"
	keyTab     = "\uE004"
	keyControl = "\uE009"
)

// press types keys into the focused element; a key written as
// "\uE009+a" is pressed with Control held.
func (w *webDriver) press(keys ...string) {
	w.t.Helper()
	var acts []map[string]any
	for _, k := range keys {
		if mod, key, ok := strings.Cut(k, "+"); ok && mod == keyControl {
			acts = append(acts, map[string]any{"type": "keyDown", "value": keyControl},
				map[string]any{"type": "keyDown", "value": key}, map[string]any{"type": "keyUp", "value": key},
				map[string]any{"type": "keyUp", "value": keyControl})
			continue
		}
		for _, r := range k {
			acts = append(acts, map[string]any{"type": "keyDown", "value": string(r)}, map[string]any{"type": "keyUp", "value": string(r)})
		}
	}
	w.do("POST", w.s("/actions"), map[string]any{"actions": []any{map[string]any{"type": "key", "id": "keyboard", "actions": acts}}})
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startDriver runs chromedriver on a free loopback port and waits until
// it says it is ready. chromedriver binds the port it is given, so the
// port is chosen before it binds: should another process take it
// meanwhile (chromedriver then exits, or the port answers as something
// else), it starts again on another.
func startDriver(t *testing.T, driver string) *webDriver {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // a hang guard, not a speed figure
	for attempt := 1; ; attempt++ {
		w, why := tryDriver(t, driver, freePort(t), deadline)
		if why == "" {
			return w
		}
		if attempt == 5 || time.Now().After(deadline) {
			t.Fatalf("chromedriver did not start (attempt %d): %s", attempt, why)
		}
		t.Logf("chromedriver, attempt %d: %s; trying another port", attempt, why)
	}
}

// tryDriver is one attempt of startDriver, on port: why says what went
// wrong, empty when chromedriver answers its /status as itself.
func tryDriver(t *testing.T, driver string, port int, deadline time.Time) (w *webDriver, why string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, driver, fmt.Sprintf("--port=%d", port))
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start chromedriver: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-exited }) }
	t.Cleanup(stop)
	w = &webDriver{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	for {
		select {
		case err := <-exited:
			exited <- err // for stop
			return nil, fmt.Sprintf("it exited (%v): port %d taken?", err, port)
		default:
		}
		resp, err := http.Get(w.base + "/status")
		if err == nil {
			var st struct {
				Value struct {
					Ready   bool   `json:"ready"`
					Message string `json:"message"`
				} `json:"value"`
			}
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
			if json.Unmarshal(body, &st) == nil && st.Value.Ready && strings.Contains(st.Value.Message, "ChromeDriver") {
				return w, ""
			}
			stop()
			return nil, fmt.Sprintf("port %d answers as something else (%d %.200s)", port, resp.StatusCode, body)
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Sprintf("no answer on port %d: %v", port, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startBrowser runs chromedriver and opens a headless chromium session
// with a fresh profile.
func startBrowser(t *testing.T) *webDriver {
	driver, chromium := browser(t)
	w := startDriver(t, driver)
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{"binary": chromium, "args": []string{
			"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
			"--no-first-run", "--disable-sync", "--disable-dev-shm-usage", "--window-size=1280,1100", "--user-data-dir=" + t.TempDir(),
		}},
	}}}
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(w.do("POST", "/session", caps), &sess); err != nil || sess.SessionID == "" {
		t.Fatalf("webdriver session: %v", err)
	}
	w.session = sess.SessionID
	t.Cleanup(func() { w.do("DELETE", w.s(""), nil) })
	return w
}

func (w *webDriver) open(url string) { w.do("POST", w.s("/url"), map[string]any{"url": url}) }

// TestReviewPageWithTheKeyboardAlone reviews two queries in headless
// chromium using only key presses, then checks what was saved, that a
// reload shows it, and that a second annotator's disagreement is flagged.
func TestReviewPageWithTheKeyboardAlone(t *testing.T) {
	w := startBrowser(t)
	journal := filepath.Join(t.TempDir(), "review.jsonl")
	r := open(t, journal)
	srv := httptest.NewServer(r.Handler())
	defer srv.Close()
	w.open(r.LoginLink(srv.URL + "/"))
	w.until("the proposals of the first query", `document.querySelectorAll('#proposals .proposal').length === 3`)
	w.until("focus on the first proposal", `document.activeElement && document.activeElement.dataset.id === document.querySelectorAll('#proposals .proposal')[0].dataset.id`)
	var annotator string
	w.exec(&annotator, `return document.querySelector('#annotator').value`)
	if annotator != "ann" {
		t.Fatalf("annotator = %q", annotator)
	}
	saved := func(n int) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute) // a hang guard, not a speed figure
		for len(r.j.annotations()) < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d annotations saved, want %d", len(r.j.annotations()), n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	q1 := r.Query("q1")
	// a: accept the first proposal; the page moves on to the second.
	w.press("a")
	saved(1)
	w.until("focus on the second proposal", `document.activeElement.dataset.id === '`+q1.Proposals[1].ID+`'`)
	// r: reject the second.
	w.press("r")
	saved(2)
	// c: correct the third in the editor, Ctrl+Enter saves.
	w.until("focus on the third proposal", `document.activeElement.dataset.id === '`+q1.Proposals[2].ID+`'`)
	w.press("c")
	w.until("the editor, focused on the argument pairs", `document.querySelector('#editor').open && document.activeElement.id === 'edit-inputs'`)
	w.press(keyControl+"+a", "q -> searchTerm", keyEnter, "limit -> maxResults", keyTab, "results[].isbn -> items[].isbn13")
	w.press(keyControl + "+" + keyEnter)
	saved(3)
	w.until("the editor closed", `!document.querySelector('#editor').open`)
	// n: the next query; a: accept its proposal.
	w.press("n")
	w.until("the second query", `document.querySelector('#query-text').textContent.includes('convert 10 euros')`)
	w.press("a")
	saved(4)
	// p: back to the first query, whose statuses show what was done.
	w.press("p")
	w.until("the first query", `document.querySelector('#query-text').textContent.includes('Dune')`)
	var statuses []string
	w.exec(&statuses, `return [...document.querySelectorAll('#proposals .proposal')].map(e => e.dataset.status)`)
	if strings.Join(statuses, ",") != "accept,reject,correct" {
		t.Fatalf("statuses = %v", statuses)
	}
	all := r.j.annotations()
	c := all[2]
	if c.Verdict != Correct || c.Annotator != "ann" || len(c.Mapping.Inputs) != 2 || c.Mapping.Inputs[1].To != "maxResults" ||
		len(c.Mapping.Outputs) != 1 || c.Mapping.Outputs[0].To != "items[].isbn13" {
		t.Fatalf("correction = %+v", c.Mapping)
	}
	// Tab reaches the buttons too: from the focused proposal to its Accept.
	w.press("j", "k") // focus the first proposal again
	w.press(keyTab)
	var label string
	w.exec(&label, `return document.activeElement.textContent`)
	if label != "Accept (a)" {
		t.Fatalf("Tab from a proposal reached %q", label)
	}
	// A second annotator disagrees with the rejection: after a reload the
	// proposal is flagged, and both annotations are kept.
	if _, err := r.Annotate(Annotation{Query: "q1", Proposal: q1.Proposals[1].ID, Verdict: Accept, Annotator: "bob"}); err != nil {
		t.Fatal(err)
	}
	w.open(srv.URL)
	w.until("the reloaded page", `document.querySelectorAll('#proposals .proposal').length === 3`)
	w.exec(&statuses, `return [...document.querySelectorAll('#proposals .proposal')].map(e => e.dataset.status)`)
	if statuses[1] != "conflict" {
		t.Fatalf("statuses after bob = %v", statuses)
	}
	e := r.Export()
	if len(e.Mappings) != 2 || len(e.Conflicts) != 1 {
		t.Fatalf("export: %d mappings, %d conflicts", len(e.Mappings), len(e.Conflicts))
	}
	for _, m := range e.Mappings {
		if m.Provenance != mapping.Human {
			t.Fatalf("exported provenance %s", m.Provenance)
		}
	}
	if *screenshot != "" {
		w.press("j") // show the focus ring on a proposal
		w.exec(nil, "window.scrollTo(0, 0)")
		var b64 string
		if err := json.Unmarshal(w.do("GET", w.s("/screenshot"), nil), &b64); err != nil {
			t.Fatal(err)
		}
		png, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*screenshot, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDriverStartRefusesAThief: a port another server took before
// chromedriver could bind it is not taken for chromedriver (startDriver
// then tries another port), whether chromedriver exits first or the other
// server answers first.
func TestDriverStartRefusesAThief(t *testing.T) {
	driver, _ := browser(t)
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"value":{"ready":true,"message":"a test model, not a browser"}}`)
	}))
	defer thief.Close()
	port := thief.Listener.Addr().(*net.TCPAddr).Port
	if _, why := tryDriver(t, driver, port, time.Now().Add(time.Minute)); why == "" {
		t.Fatalf("the server on port %d was taken for chromedriver", port)
	} else {
		t.Logf("refused: %s", why)
	}
	w := startDriver(t, driver)
	if w.base == thief.URL {
		t.Errorf("startDriver chose the taken port %d", port)
	}
}
