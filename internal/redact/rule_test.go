package redact

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"password": true, "sslpassword": true, "api-key": true, "apikey": true, "API_KEY": true, "key": true, "token": true,
		"access_token": true, "X-Amz-Signature": true, "sig": true, "secret": true, "client_secret": true, "sslkey": true,
		"Authorization": true, "apiKey": true, "--toolbench-key": true,
		"llm-key-env": false, "auth-token-env": false, "max-tokens": false, "bleu-tokens": false, "host": false, "sslmode": false,
		"dbname": false, "user": false, "model": false, "tool_input": false, "": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestDSNAndKeywords(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:PW@db:5432/x?sslmode=require&sslpassword=SP":                  "postgres://u:xxxxx@db:5432/x?sslmode=xxxxx&sslpassword=xxxxx",
		"postgresql://TOKEN@db/x":                                                   "postgresql://xxxxx@db/x",
		"host=db port=5432 dbname=toolenv user=u password=PW":                       "host=db port=5432 dbname=toolenv user=u password=xxxxx",
		"host=db password='a \\' b' sslpassword = SP sslmode=verify-full sslkey=/k": "host=db password=xxxxx sslpassword = xxxxx sslmode=verify-full sslkey=xxxxx",
		"/var/lib/toolenv/store.db":                                                 "/var/lib/toolenv/store.db",
		":memory:":                                                                  ":memory:",
		"postgres://u:PW@db:notaport/x?k=v":                                         "postgres://xxxxx@db:notaport/x?xxxxx",
		"data=1.db":                                                                 "data=1.db", // not a connection string
	} {
		if got := DSN(in); got != want {
			t.Errorf("DSN(%q) = %q, want %q", in, got, want)
		}
	}
	for s, want := range map[string]bool{"host=db": true, "dbname=x password=y": true, "data=1.db": false, "store.db": false, "host=": true, "host='x": false, "a b": false} {
		if got := IsKeywords(s); got != want {
			t.Errorf("IsKeywords(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestTextPairsAndBearer(t *testing.T) {
	in := `open store host=db password=PW1 failed; cannot parse "postgres://u:PW2@h/x?sslpassword=PW3": bad; {"api_key": "PW4", "model": "m"} Authorization: Bearer PW5TOKEN; retry with max_tokens=512.`
	got := Text(in)
	for _, leak := range []string{"PW1", "PW2", "PW3", "PW4", "PW5TOKEN"} {
		if strings.Contains(got, leak) {
			t.Errorf("%q leaks %s", got, leak)
		}
	}
	for _, keep := range []string{"host=db", `"model": "m"`, "max_tokens=512.", "failed; cannot parse"} {
		if !strings.Contains(got, keep) {
			t.Errorf("%q lost %q", got, keep)
		}
	}
}

func TestArgs(t *testing.T) {
	in := []string{"toolenv", "eval", "--model", "http://u:PW1@h/v1?api-key=K1", "--store=host=db password=PW2", "--queue", "postgres://q:PW3@db/x",
		"--toolbench-key", "K2", "--api-key=K3", "--llm-key-env", "OPENAI_API_KEY", "--max-tokens", "512", "--no-judge", "tasks/dir",
		"--faults", `{"rules":[{"url":"http://x:PW4@h"}]}`}
	got := strings.Join(Args(in), " ")
	for _, leak := range []string{"PW1", "PW2", "PW3", "PW4", "K1", "K2", "K3"} {
		if strings.Contains(got, leak) {
			t.Errorf("%q leaks %s", got, leak)
		}
	}
	for _, keep := range []string{"toolenv eval --model http://u:xxxxx@h/v1?api-key=xxxxx", "--llm-key-env OPENAI_API_KEY", "--max-tokens 512", "--no-judge tasks/dir", "host=db"} {
		if !strings.Contains(got, keep) {
			t.Errorf("%q lost %q", got, keep)
		}
	}
}

// TestPlantedSecretsNeverShow generates URLs, keyword strings, texts and
// command lines with secrets planted in every place the rule covers, and
// checks that none shows after redaction while the rest is kept.
func TestPlantedSecretsNeverShow(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 3))
	secretNames := []string{"password", "sslpassword", "api-key", "apikey", "key", "token", "secret", "sig", "access_token", "X-Api-Key", "clientSecret"}
	plainNames := []string{"sslmode", "limit", "model", "dbname", "page"}
	for i := range 500 {
		var secrets []string
		secret := func() string {
			s := fmt.Sprintf("S%dq%05d", i, rng.IntN(100000))
			secrets = append(secrets, s)
			return s
		}
		name := func(list []string) string { return list[rng.IntN(len(list))] }
		scheme := []string{"http", "https", "postgres", "postgresql", "redis"}[rng.IntN(5)]
		u := scheme + "://"
		switch rng.IntN(3) {
		case 0:
			u += "user:" + secret() + "@"
		case 1:
			u += secret() + "@"
		}
		u += "host.example:8080/p"
		for j := range rng.IntN(3) {
			sep := "?"
			if j > 0 {
				sep = "&"
			}
			u += sep + name(append(secretNames, plainNames...)) + "=" + secret()
		}
		kw := "host=db dbname=x " + name(secretNames) + "='" + secret() + " x' user=u " + name(secretNames) + "=" + secret()
		text := "failed: " + u + ": " + kw + "; " + name(secretNames) + "=" + secret() + ` {"` + name(secretNames) + `": "` + secret() + `"}`
		args := []string{"toolenv", "serve", "--store", kw, "--llm-url=" + u, "--" + name(secretNames), secret(), "--" + name(secretNames) + "=" + secret(), "--faults", text}
		outs := []string{DSN(u), DSN(kw), Keywords(kw), Value(u), Value(kw), Text(text), strings.Join(Args(args), " ")}
		for _, out := range outs {
			for _, s := range secrets {
				if strings.Contains(out, s) {
					t.Fatalf("%q shows %s", out, s)
				}
			}
		}
		if !strings.Contains(DSN(u), "host.example:8080/p") || !strings.Contains(DSN(kw), "host=db dbname=x") {
			t.Fatalf("the redaction lost what is not secret: %q %q", DSN(u), DSN(kw))
		}
		for _, s := range Secrets(u) {
			if strings.Contains(Scrub("err: "+s+" and "+u, Secrets(u)...), s) {
				t.Fatalf("Scrub left %s", s)
			}
		}
	}
}

func FuzzKeywords(f *testing.F) {
	f.Add("host=db password=PW")
	f.Add("host='a\\'b' sslpassword = 'x y'")
	f.Add("dbname=")
	f.Fuzz(func(t *testing.T, s string) {
		out := Keywords(s)
		kws, ok := parseKeywords(s)
		if !ok {
			return
		}
		for _, k := range kws {
			if SecretName(k.name) && len(k.value) >= 3 && strings.Contains(k.value, " ") == false && !strings.Contains(Mask, k.value) {
				again, ok := parseKeywords(out)
				if !ok {
					t.Fatalf("Keywords(%q) = %q, which does not parse", s, out)
				}
				for _, k2 := range again {
					if k2.name == k.name && k2.value == k.value {
						t.Fatalf("Keywords(%q) = %q keeps %s=%q", s, out, k.name, k.value)
					}
				}
			}
		}
	})
}

func TestHandler(t *testing.T) {
	var b strings.Builder
	log := slog.New(Handler(slog.NewTextHandler(&b, nil))).With("store", "host=db password=PW1")
	log.WithGroup("g").Info("open postgres://u:PW2@db/x failed", "err", errors.New("dial http://h/v1?api-key=PW3"), "n", 3,
		slog.Group("inner", "auth", "Bearer PW4abcdef"), "url", fmt.Stringer(urlish("http://t:PW5@h")))
	for _, leak := range []string{"PW1", "PW2", "PW3", "PW4", "PW5"} {
		if strings.Contains(b.String(), leak) {
			t.Errorf("log shows %s: %s", leak, b.String())
		}
	}
	if !strings.Contains(b.String(), "g.n=3") {
		t.Errorf("log lost an attribute: %s", b.String())
	}
}

type urlish string

func (u urlish) String() string { return string(u) }

// TestOrdinaryWordsAreKept checks that the redaction hides credentials
// and keeps prose: a generated token after "Bearer " goes, an ordinary
// word stays, whatever the case of "bearer".
func TestOrdinaryWordsAreKept(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 4))
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for _, text := range []string{
		"no bearer token is configured",
		"listening without a bearer token: set --auth-token-env",
		"Bearer auth is required; send a Bearer header",
		"the BEARER scheme needs credentials",
	} {
		if got := Text(text); got != text {
			t.Errorf("Text(%q) = %q: it ate an ordinary word", text, got)
		}
	}
	// A short lowercase password is no word of prose.
	for _, pw := range []string{"letmein", "hunter", "Password", "changeme"} {
		in := "Authorization: Bearer " + pw + "; retry"
		if got := Text(in); strings.Contains(got, pw) {
			t.Errorf("Text(%q) = %q: it kept a password", in, got)
		}
	}
	for i := range 300 {
		var tok []byte
		switch i % 3 {
		case 0: // hex, as openssl rand -hex makes
			for range 32 {
				tok = append(tok, "0123456789abcdef"[rng.IntN(16)])
			}
		case 1: // base64url, a JWT's parts
			for range 3 {
				for range 4 + rng.IntN(30) {
					tok = append(tok, alnum[rng.IntN(len(alnum))])
				}
				tok = append(tok, '.')
			}
			tok = tok[:len(tok)-1]
		default: // a prefixed personal token
			tok = append(tok, "ghp_"...)
			for range 36 {
				tok = append(tok, alnum[rng.IntN(len(alnum))])
			}
		}
		if OrdinaryWord(string(tok)) {
			continue // a random draw that is a word of prose (rare): nothing to hide
		}
		for _, scheme := range []string{"Bearer ", "bearer ", "BEARER  "} {
			in := "Authorization: " + scheme + string(tok) + "; retry"
			if got := Text(in); strings.Contains(got, string(tok)) || !strings.Contains(got, "; retry") {
				t.Fatalf("Text(%q) = %q", in, got)
			}
		}
	}
}

func TestCredential(t *testing.T) {
	for _, c := range []struct {
		name, value string
		want        bool
	}{
		{"MEMORY_FILE_PATH", "/tmp/memory.json", false},
		{"LOG_LEVEL", "debug", false},
		{"ALLOWED_DIRS", "/srv/data:/tmp", false},
		{"GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_x", true},
		{"OPENAI_API_KEY", "sk-1", true},
		{"Authorization", "Bearer abc123def", true},
		{"DATABASE_URL", "postgres://u:pw@db/x", true},
		{"X-Forwarded", "Bearer 0f9e8d7c6b5a", true},
		{"EMPTY_TOKEN", "", false},
	} {
		if got := Credential(c.name, c.value); got != c.want {
			t.Errorf("Credential(%q, %q) = %v, want %v", c.name, c.value, got, c.want)
		}
	}
}
