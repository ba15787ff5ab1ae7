package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/redact"
)

// Meta keys this package sets on every Result.
const (
	// MetaClass is the Appendix D class of the answer.
	MetaClass = "upstream_class"
	// MetaRule is the name of the rule that decided the class.
	MetaRule = "upstream_rule"
	// MetaMode is "proxy" or "direct".
	MetaMode = "upstream_mode"
	// MetaHTTPStatus is the HTTP status of the answer, when there was one.
	MetaHTTPStatus = "upstream_http_status"
	// MetaCacheable is "false" on results that must not be cached.
	MetaCacheable = "cacheable"
	// CallMetaToolbenchKey is the Call.Meta key a front-end may set to
	// the client's toolbench_key; it is forwarded to the proxy when
	// Config.ToolbenchKey is empty, as StableToolBench forwards the
	// caller's key.
	CallMetaToolbenchKey = "toolbench_key"
)

// The modes a call can be passed upstream in.
const (
	ModeProxy  = "proxy"
	ModeDirect = "direct"
)

// Config configures a Backend. The zero value reaches tools through their
// own URLs only, with the defaults below.
type Config struct {
	// ProxyURL is StableToolBench's RapidAPI proxy (its config.yml
	// "toolbench_url"). Empty means no proxy.
	ProxyURL string
	// ToolbenchKey is sent to the proxy as the toolbench_key header and
	// field. Empty means the caller's key (Call.Meta["toolbench_key"]).
	ToolbenchKey string
	// Direct enables calls to a tool's own URL (Tool.Binding.BaseURL).
	// When both are possible the tool's own URL is used.
	Direct bool
	// Headers are added to every direct request (an API key header, for
	// example).
	Headers map[string]string
	// Timeout bounds one call, connection included. Default 15 s, the
	// timeout StableToolBench's client gives the proxy.
	Timeout time.Duration
	// MaxBody is the largest response body read, in bytes. Default 4 MiB.
	MaxBody int64
	// HTTPClient sends the requests. Default: a client with dial and TLS
	// handshake timeouts and no overall timeout (Timeout bounds calls).
	HTTPClient *http.Client
	// Logger receives one debug line per call. Nil discards.
	Logger *slog.Logger
}

// Backend passes calls to real HTTP APIs. It is a toolenv.Handler and is
// safe for concurrent use.
type Backend struct {
	cfg    Config
	client *http.Client
	log    *slog.Logger
}

var _ toolenv.Handler = (*Backend)(nil)

// New returns a Backend for cfg. It fails when the proxy URL is not an
// absolute http(s) URL.
func New(cfg Config) (*Backend, error) {
	if cfg.ProxyURL != "" {
		if err := checkHTTPURL(cfg.ProxyURL); err != nil {
			return nil, fmt.Errorf("upstream: proxy URL %q: %w (give an absolute http:// or https:// URL, e.g. http://127.0.0.1:8080/rapidapi)", redact.URL(cfg.ProxyURL), err)
		}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Second
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 4 << 20
	}
	b := &Backend{cfg: cfg, client: cfg.HTTPClient, log: cfg.Logger}
	if b.client == nil {
		b.client = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   5 * time.Second,
			MaxIdleConnsPerHost:   32,
			IdleConnTimeout:       90 * time.Second,
			ExpectContinueTimeout: time.Second,
		}}
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	return b, nil
}

// Configured reports whether the backend can reach anything at all.
func (b *Backend) Configured() bool { return b.cfg.ProxyURL != "" || b.cfg.Direct }

// Mode returns how a call to t would be passed upstream: ModeDirect,
// ModeProxy, or "" when it cannot be.
func (b *Backend) Mode(t *toolenv.Tool) string {
	if t == nil {
		return ""
	}
	if b.cfg.Direct && t.Binding != nil && t.Binding.BaseURL != "" {
		return ModeDirect
	}
	if b.cfg.ProxyURL != "" && (t.Category != "" || t.Meta["std_category"] != "") {
		return ModeProxy
	}
	return ""
}

// Invoke passes call upstream and classifies the answer. It never returns
// nil; a failure is a Result whose Status is not StatusOK and whose Meta
// says why (MetaClass, MetaRule) and that it must not be cached.
func (b *Backend) Invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	if call == nil || call.Tool == nil {
		return toolenv.Errorf(toolenv.StatusUnknownTool, "resolve the tool before calling the upstream backend", "upstream: call has no tool")
	}
	mode := b.Mode(call.Tool)
	if mode == "" {
		r := toolenv.Errorf(toolenv.StatusUnavailable, "configure a proxy URL, or a base URL in the tool's binding with direct calls enabled",
			"upstream: no upstream is configured for %s", call.Tool.ID)
		r.Source = toolenv.SourceUpstream
		r.SetMeta(MetaClass, string(ClassNotConnected))
		r.SetMeta(MetaRule, "not_configured")
		r.SetMeta(MetaCacheable, "false")
		return r
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	start := time.Now()
	var (
		obs  *Observation
		body json.RawMessage
		hdr  http.Header
	)
	switch mode {
	case ModeProxy:
		obs, body, hdr = b.viaProxy(ctx, call)
	default:
		obs, body, hdr = b.direct(ctx, call)
	}
	if ctx.Err() != nil && obs.Transport != nil && errors.Is(ctx.Err(), context.Canceled) {
		// The caller went away; say so rather than blaming the upstream.
		r := &toolenv.Result{Status: toolenv.StatusCanceled, Error: "upstream: call canceled", Source: toolenv.SourceUpstream}
		r.SetMeta(MetaMode, mode)
		r.SetMeta(MetaCacheable, "false")
		return r
	}
	rule := Classify(obs)
	r := b.result(call, mode, obs, rule, body, hdr)
	b.log.LogAttrs(ctx, slog.LevelDebug, "upstream call",
		slog.String("tool", call.Tool.ID), slog.String("mode", mode), slog.String("class", string(rule.Class)),
		slog.String("rule", rule.Name), slog.Int("http_status", obs.HTTPStatus), slog.Duration("elapsed", time.Since(start)))
	return r
}

// result turns a classified observation into a Result.
func (b *Backend) result(call *toolenv.Call, mode string, obs *Observation, rule Rule, body json.RawMessage, hdr http.Header) *toolenv.Result {
	r := &toolenv.Result{Status: rule.Status, Source: toolenv.SourceUpstream}
	r.SetMeta(MetaClass, string(rule.Class))
	r.SetMeta(MetaRule, rule.Name)
	r.SetMeta(MetaMode, mode)
	if obs.HTTPStatus != 0 {
		r.SetMeta(MetaHTTPStatus, strconv.Itoa(obs.HTTPStatus))
	}
	if rule.Class == ClassSuccess {
		r.Body = body
		return r
	}
	r.SetMeta(MetaCacheable, "false")
	if len(body) > 0 && obs.Transport == nil && !obs.TooLarge {
		r.Body = body
	}
	what := obs.Error
	switch {
	case obs.TooLarge:
		what = fmt.Sprintf("the answer is over the %d bytes the upstream client reads", b.cfg.MaxBody)
	case obs.Transport != nil:
		what = redact.Text(obs.Transport.Error()) // it names the URL, which may hold a key
	case what == "":
		what = obs.Response
	}
	r.Error = fmt.Sprintf("upstream %s for %s: %s: %s", strings.ReplaceAll(string(rule.Class), "_", " "), call.Tool.Name, rule.Name, clip(what, 300))
	if rule.Status == toolenv.StatusRateLimited && hdr != nil {
		if s, err := strconv.Atoi(hdr.Get("Retry-After")); err == nil && s > 0 {
			r.RetryAfter = time.Duration(s) * time.Second
		}
	}
	return r
}

// send sends req and reads at most MaxBody bytes of the response. obs
// holds what is known so far: a transport failure, or the HTTP status and
// whether the body was longer; ok says the body was read.
func (b *Backend) send(req *http.Request) (obs *Observation, data []byte, header http.Header, ok bool) {
	resp, err := b.client.Do(req)
	if err != nil {
		return &Observation{Transport: err}, nil, nil, false
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(io.LimitReader(resp.Body, b.cfg.MaxBody+1))
	if err != nil {
		return &Observation{Transport: err, HTTPStatus: resp.StatusCode}, nil, resp.Header, false
	}
	tooLarge := int64(len(data)) > b.cfg.MaxBody
	if tooLarge {
		data = data[:b.cfg.MaxBody]
	}
	return &Observation{HTTPStatus: resp.StatusCode, TooLarge: tooLarge}, data, resp.Header, true
}

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// checkHTTPURL checks that s is an absolute http(s) URL.
func checkHTTPURL(s string) error {
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return errors.New("not an http(s) URL")
	}
	if len(s) <= len("https://") {
		return errors.New("no host")
	}
	return nil
}

// Target returns where a call to t goes, as scheme://host (no path, user
// info or query): the key of a circuit breaker per upstream. It is ""
// when t cannot be passed upstream.
func (b *Backend) Target(t *toolenv.Tool) string {
	raw := ""
	switch b.Mode(t) {
	case ModeProxy:
		raw = b.cfg.ProxyURL
	case ModeDirect:
		raw = t.Binding.BaseURL
	default:
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "upstream"
	}
	return u.Scheme + "://" + u.Host
}

// Unreachable reports whether a result of this backend says the upstream
// did not answer, or answered with a server error (5xx): what a circuit
// breaker counts. Errors the API gave about the call itself (4xx, its
// own error messages, rate limits) are answers.
func Unreachable(r *toolenv.Result) bool {
	if r.OK() || r.Source != toolenv.SourceUpstream || r.Status == toolenv.StatusCanceled || r.Meta[MetaRule] == "not_configured" {
		return false
	}
	hs := r.Meta[MetaHTTPStatus]
	if hs == "" {
		return true
	}
	code, err := strconv.Atoi(hs)
	return err == nil && code >= 500
}
