package environment

import (
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/toolenv/toolenv/internal/configfile"
	"github.com/toolenv/toolenv/invoke"
)

// Config says what an environment serves and how it answers. The same
// fields are the flags of toolenv serve, mcp and eval and the keys of a
// configuration file (--config toolenv.yaml); the struct tags are the one
// place that says so (see the package documentation for how to add a
// field).
//
// The zero Config is valid: the embedded demo collection, an in-memory
// store, the offline synthesizer, no timeout and no limit on results.
// Default returns the values the CLI starts from instead.
type Config struct {
	// Store is the cache and records store: an SQLite file, ":memory:"
	// ("" means ":memory:"), or a postgres:// DSN that replicas share
	// (docs/store.md).
	Store string `json:"store" flag:"store" path:"file" help:"cache and records store: an SQLite file (\":memory:\" keeps nothing) or postgres://user:password@host:port/db, shared by replicas; $TOOLENV_STORE when not given (default: toolenv/store.db in the user's cache folder)"`
	// ImageCache is the folder where the indexed in-memory copies of the
	// NL2SQL collections' databases are kept for every process to reuse
	// (rodb.DiskCache); "" or "off" keeps none, each process indexing
	// its own. Default sets rodb.DefaultCacheDir().
	ImageCache string `json:"image_cache" flag:"image-cache" help:"folder where the indexed copies of NL2SQL databases are kept for every process to reuse (keyed by content, checked on every read, at most 4 GiB); \"off\": each process indexes its own; $TOOLENV_IMAGE_CACHE when not given (default: toolenv/images in the user's cache folder)"`
	// StoreTimeout bounds each operation of a PostgreSQL store (and
	// connecting to it), so that calls fail fast while it is gone; 0
	// means 5s.
	StoreTimeout time.Duration `json:"store_timeout" flag:"store-timeout" default:"5s" help:"with a postgres:// store: the longest one store operation (or connecting) may take before the call fails as the store unavailable (raise it on a busy database server)"`
	// ClaimLease is how long replicas sharing a PostgreSQL store wait for
	// one that died while answering a miss before another answers it; 0
	// means 15s.
	ClaimLease time.Duration `json:"claim_lease" flag:"claim-lease" default:"15s" help:"with a postgres:// store and a simulator or upstream: how long the replicas wait for one that died while answering a miss before another answers it"`
	// Sessions is where SLOT/SEL task sessions live: "memory" (this
	// process), "store" (the store: every replica sharing it serves
	// every session, and sessions survive restarts; package tasksession),
	// or "" for store with a postgres:// store and memory otherwise.
	Sessions string `json:"sessions" flag:"sessions" enum:",memory,store" help:"where SLOT/SEL task sessions live: memory (this process) or store (the --store database: every replica sharing it serves every session, ids issued by one are honoured by all, sessions survive restarts); default: store with a postgres:// store, else memory"`
	// ToolBench are StableToolBench query files, folders of them, or
	// toolenv/tools/<Category>/<tool>.json trees, served as one collection.
	ToolBench []string `json:"toolbench" flag:"toolbench" path:"file" help:"ToolBench docs: a StableToolBench query file, a folder of them, or a toolenv/tools/<Category>/<tool>.json tree (repeatable)"`
	// OpenAPI are OpenAPI 3.0/3.1 or Swagger 2.0 documents, each served as a collection;
	// NAME=FILE names the collection.
	OpenAPI []string `json:"openapi" flag:"openapi" path:"named" help:"an OpenAPI 3.0/3.1 or Swagger 2.0 document (JSON or YAML) to serve as a collection; NAME=FILE names the collection (repeatable)"`
	// Collections are toolenv collection folders (collection.json +
	// tools.json): built NL2SQL flavors, drifted versions, ...
	Collections []string `json:"collections" flag:"collection" path:"file" help:"a toolenv collection folder (collection.json + tools.json), e.g. a built NL2SQL flavor or a drifted version (repeatable)"`
	// Watch, when positive, checks the Collections folders this often and
	// hot-loads one whose collection changed (Environment.Watch).
	Watch time.Duration `json:"watch" flag:"watch" help:"check the --collection folders this often and hot-load a changed one (a new or drifted version written over it), telling MCP clients; 0: never"`
	// MCPSources are MCP servers served as collections, and saved MCP
	// tool lists served with no server.
	MCPSources MCPSourcesConfig `json:"mcp_sources" help:"MCP servers as sources: each server's tools served as a collection through the one pipeline (cache → server → simulator), its answers recorded and replayed (docs/mcp-sources.md)"`
	// Demo also serves the embedded demo collection, which is served
	// anyway when no other source is given.
	Demo bool `json:"demo" flag:"demo" help:"also serve the embedded demo collection (it is served anyway when nothing else is given)"`
	// DemoShop also serves demo-shop, the embedded SQLite shop whose
	// REST tools write, each session in its own world.
	DemoShop bool `json:"demo_shop" flag:"demo-shop" help:"also serve demo-shop: a small embedded SQLite shop whose REST tools write, each session in its own world, with stateful tasks (docs/worlds.md)"`

	// Simulator is the LLM that answers documented APIs.
	Simulator SimulatorConfig `json:"simulator" help:"the LLM that simulates documented APIs (MirrorAPI); without a URL the offline synthesizer answers"`
	// Upstream are the real APIs tried before simulating.
	Upstream UpstreamConfig `json:"upstream" help:"real APIs tried before simulating"`
	// Breakers configure the circuit breakers of the upstream hosts and
	// the simulator's endpoint.
	Breakers BreakerConfig `json:"breakers" help:"circuit breakers of the real APIs' hosts and the simulator's endpoint"`

	// Timeout bounds one tool call; 0 means none.
	Timeout time.Duration `json:"timeout" flag:"timeout" default:"2m" help:"overall timeout of one tool call"`
	// MaxResultBytes rejects larger answers; 0 means no limit.
	MaxResultBytes int `json:"max_result_bytes" flag:"max-result-bytes" default:"8388608" help:"reject responses larger than this"`

	// Drift configures drifted collections.
	Drift DriftConfig `json:"drift" help:"drifted collections (toolenv drift) and the documentation tool"`
	// Feedback is how much a rejected call is told when it does not ask
	// (none, terse, helpful); "" keeps each collection's policy.
	Feedback string `json:"feedback" flag:"feedback" enum:",none,terse,helpful" help:"how much a rejected call is told, for calls that do not ask (?_feedback=): none, terse or helpful (default: each collection's policy)"`
	// Faults are operational faults to inject: a JSON file or inline JSON
	// (see docs/drift.md).
	Faults string `json:"faults" flag:"faults" path:"file" help:"operational faults to inject: a JSON file or inline JSON (latency, timeouts, rate limits, 5xx, flaky windows per collection/tool; see docs/drift.md)"`
	// Failover re-routes failed calls to mapped alternatives.
	Failover FailoverConfig `json:"failover" help:"re-route calls whose backend fails to mapped alternatives (docs/mapping.md)"`
	// Repair translates calls written against older documentation.
	Repair RepairConfig `json:"repair" help:"repair calls written against older documentation (docs/mapping.md)"`

	// Server configures the HTTP front-ends (Handler).
	Server ServerConfig `json:"server" help:"the HTTP front-ends (toolenv serve)"`
	// MCP configures the MCP server.
	MCP MCPConfig `json:"mcp" help:"the MCP server (at /mcp, or toolenv mcp over stdio)"`

	// Logger logs loading and calls; nil discards.
	Logger *slog.Logger `json:"-"`
	// Images, when set, shares the indexed in-memory copies of the NL2SQL
	// collections' databases with the other environments given the same
	// Images (a program that opens several over the same collections
	// indexes each database once); nil: this environment's own, shared
	// by its collections.
	Images *rodb.Images `json:"-"`
	// Getenv looks up the environment variables the *KeyEnv fields name;
	// nil means os.Getenv. No variable is read unless a field names it.
	Getenv func(string) string `json:"-"`
	// Observer is told about every call, besides the environment's
	// metrics; nil means none.
	Observer invoke.Observer `json:"-"`
	// Version is reported to MCP clients; "" means the module's version.
	Version string `json:"-"`
}

// MCPSourcesConfig names MCP servers whose tools are served as
// collections (backend/mcpsource). Each server's collection takes its
// name; its answers go through the cache, and the simulator answers when
// it cannot.
type MCPSourcesConfig struct {
	// Servers are NAME=URL (streamable HTTP) or NAME=COMMAND ARGS... (a
	// stdio server toolenv starts, restarts and stops).
	Servers []string `json:"servers" flag:"mcp-server" help:"an MCP server to serve as a collection: NAME=URL (streamable HTTP) or NAME='COMMAND ARGS...' (a stdio server toolenv starts, restarts when it dies and stops on exit); ${VAR} is read from the environment (repeatable)"`
	// Config are mcpServers documents (Claude Desktop, Cursor): files,
	// or the JSON itself.
	Config []string `json:"config" flag:"mcp-config" path:"file" help:"an mcpServers JSON file as Claude Desktop and Cursor write it ({\"mcpServers\": {NAME: {\"command\", \"args\", \"env\"} | {\"url\", \"headers\"}}}), or that JSON inline; every server in it is served (repeatable)"`
	// Tools are saved tool lists served with no server at all: from
	// recordings and the simulator. NAME=FILE names a single list.
	Tools []string `json:"tools" flag:"mcp-tools" path:"named" help:"saved MCP tools served with no server, answered from the cache and the simulator: a tools/list result, an array of tools, {\"mcpServers\": {NAME: {..., \"tools\"}}} or LiveMCPBench's tools.json; NAME=FILE names a single list (repeatable)"`
	// Headers add HTTP headers to a server's requests: NAME=Header:
	// value, the value with ${VAR} references.
	Headers []string `json:"headers" flag:"mcp-header" help:"an HTTP header sent to an MCP server: NAME=Header: value, e.g. 'api=Authorization: Bearer ${API_TOKEN}' (the token stays in the environment) (repeatable)"`
	// State overrides what tools' answers depend on: SERVER/TOOL=STATE
	// with STATE stateless, read or write (toolenv.MetaState).
	State []string `json:"state" flag:"mcp-state" help:"override what an MCP tool's answers depend on, and so what the cache may answer: SERVER/TOOL=stateless (the arguments alone), read (reads the session's state) or write (changes it); default from the tool's annotations (docs/mcp-sources.md) (repeatable)"`
	// StartTimeout bounds a server's start, initialize and first
	// tools/list; 0 means 30 s.
	StartTimeout time.Duration `json:"start_timeout" flag:"mcp-start-timeout" default:"30s" help:"longest an MCP server may take to start, initialize and list its tools (after it, serve goes on with the tool list recorded in the store, if any)"`
	// OnFailure says what answers a call the cache misses when the server
	// cannot (down, crashed, hung, an answer too large): simulate (the
	// simulator chain, marked; "" means it) or error (the failure, so
	// that failover can send the call to a mapped alternative).
	OnFailure string `json:"on_failure" flag:"mcp-on-failure" default:"simulate" enum:",simulate,error" help:"when an MCP server cannot answer a call the cache misses: simulate (the simulator or the offline synthesizer answers, marked) or error (the call fails, so --failover can send it to a mapped tool of another server)"`
	// MaxMessageBytes bounds one message from a server; 0 means 16 MiB.
	MaxMessageBytes int `json:"max_message_bytes" flag:"mcp-max-message-bytes" default:"16777216" help:"largest message accepted from an MCP server (a larger answer fails its call, and the simulator answers)"`
	// Isolation sets servers' isolation: SERVER=episode, shared or auto
	// (see mcpsource.Isolation; a server's own "isolation" key otherwise).
	Isolation []string `json:"isolation" flag:"mcp-isolation" help:"whether episodes share an MCP server's state: SERVER=episode (each episode, session or evaluation task gets a fresh instance: a process of its own in a folder of its own, from a pool started ahead), shared (one instance for all) or auto (the default: episode for a stdio server with tools that write, and for an HTTP server with a reset configured); overrides the server's own \"isolation\" (docs/mcp-sources.md) (repeatable)"`
	// Pool is how many instances of each isolated server are kept
	// started and ready; 0 means mcpsource.DefaultPool.
	Pool int `json:"pool" flag:"mcp-pool" default:"2" help:"instances of each isolated stdio MCP server kept started and ready, so that an episode does not wait for a start (a server's own isolation.pool overrides)"`
	// MaxInstances bounds each isolated server's instances; 0 means
	// mcpsource.DefaultMaxInstances.
	MaxInstances int `json:"max_instances" flag:"mcp-max-instances" default:"32" help:"most instances of each isolated stdio MCP server at once, ready and in use; an episode beyond it waits for one to end, at most --mcp-start-timeout, then is refused (a server's own isolation.max overrides)"`
	// EpisodeDirs is the folder episodes' own folders are made in; ""
	// means the system's temporary folder.
	EpisodeDirs string `json:"episode_dirs" flag:"mcp-episode-dirs" path:"file" help:"the folder in which each instance of an isolated stdio MCP server gets its own folder (${TOOLENV_EPISODE_DIR}; default: the system's temporary folder)"`
	// KeepDirs keeps each episode's folder when it ends.
	KeepDirs bool `json:"keep_dirs" flag:"mcp-keep-dirs" help:"keep each episode's MCP server folder when the episode ends, for inspection (its path is logged); by default it is removed"`
}

// SimulatorConfig configures the LLM simulator of documented APIs.
type SimulatorConfig struct {
	// URL is an OpenAI-compatible endpoint; "" means the offline
	// synthesizer answers.
	URL string `json:"url" flag:"llm-url" url:"http" help:"OpenAI-compatible endpoint of the API simulator, e.g. http://127.0.0.1:8000/v1 (vLLM serving MirrorAPI); empty: the offline synthesizer answers"`
	// Model is the model name the endpoint serves (required with URL).
	Model string `json:"model" flag:"llm-model" help:"model name of the simulator"`
	// KeyEnv names the environment variable holding the API key.
	KeyEnv string `json:"key_env" flag:"llm-key-env" default:"OPENAI_API_KEY" help:"environment variable holding the simulator's API key"`
	// APIKey is the API key itself, for Go programs; it wins over KeyEnv.
	// A configuration file should name a variable with key_env instead.
	APIKey string `json:"api_key,omitempty" secret:"simulator.key_env" help:"the simulator's API key itself"`
	// Prompt is sft (MirrorAPI), cot (MirrorAPI chain of thought) or stb
	// (StableToolBench's GPT prompt); "" means sft.
	Prompt string `json:"prompt" flag:"sim-prompt" default:"sft" enum:",sft,cot,stb" help:"simulator prompt: sft (MirrorAPI), cot (MirrorAPI chain of thought) or stb (StableToolBench's GPT prompt)"`
	// Timeout bounds one simulator request; 0 means the client's default
	// (120 s).
	Timeout time.Duration `json:"timeout" flag:"llm-timeout" default:"60s" help:"timeout of one simulator request"`
	// Budget bounds the simulator's part of one call, retries included;
	// it also always ends before the call's own timeout, leaving time for
	// the synthesizer. 0 means 30 s.
	Budget time.Duration `json:"budget" flag:"sim-budget" default:"30s" help:"longest the simulator may take for one call, retries included (it also always stops a moment before --timeout, so the fallback can answer)"`
	// OnFailure says what answers when the simulator cannot: synthesize
	// (the offline synthesizer, marked) or error.
	OnFailure string `json:"on_failure" flag:"on-simulator-failure" default:"synthesize" enum:",synthesize,error" help:"when the simulator cannot answer (endpoint down, too slow, unreadable answers, circuit open): synthesize (the offline synthesizer answers, marked in the result's warnings and provenance) or error"`
}

// BreakerConfig configures the circuit breakers of the real APIs' hosts
// and of the simulator's endpoint.
type BreakerConfig struct {
	// Failures in a row that open a breaker; 0 means 5, -1 never.
	Failures int `json:"failures" flag:"breaker-failures" default:"5" help:"failures in a row after which an upstream host or the simulator's endpoint is skipped (circuit open); -1: never"`
	// Cooldown is how long an open breaker skips its dependency before
	// one call probes it (doubling after each failed probe, up to 5 min).
	Cooldown time.Duration `json:"cooldown" flag:"breaker-cooldown" default:"30s" help:"how long an open circuit skips its dependency before one call probes it (doubled after each failed probe, up to 5 min)"`
}

// UpstreamConfig configures the real APIs tried before simulating.
type UpstreamConfig struct {
	// URL is a StableToolBench/RapidAPI proxy.
	URL string `json:"url" flag:"upstream-url" url:"http" help:"StableToolBench/RapidAPI proxy URL to try before simulating (e.g. http://host:8080/rapidapi)"`
	// KeyEnv names the environment variable holding the proxy's
	// toolbench_key.
	KeyEnv string `json:"key_env" flag:"upstream-key-env" default:"TOOLBENCH_KEY" help:"environment variable holding the proxy's toolbench_key"`
	// ToolbenchKey is the key itself, for Go programs; it wins over
	// KeyEnv.
	ToolbenchKey string `json:"toolbench_key,omitempty" secret:"upstream.key_env" help:"the proxy's toolbench_key itself"`
	// Direct calls each tool's own documented URL.
	Direct bool `json:"direct" flag:"upstream-direct" help:"call each tool's own documented URL before simulating"`
	// Timeout bounds one upstream request; 0 means 15 s.
	Timeout time.Duration `json:"timeout" flag:"upstream-timeout" default:"15s" help:"timeout of one upstream request"`
}

// DriftConfig configures drifted collections.
type DriftConfig struct {
	// Mode overrides the mode of drifted collections: strict or compat;
	// "" keeps each collection's policy.
	Mode string `json:"mode" flag:"drift-mode" enum:",strict,compat" help:"mode of drifted collections, overriding their policy: strict (reject calls written against older versions) or compat (translate them, with a deprecation warning)"`
	// DocsTool adds the documentation tool to every collection.
	DocsTool bool `json:"docs_tool" flag:"docs-tool" help:"add the tool get_api_documentation to every collection: it returns the current documentation of an API (old names resolve) and what changed"`
}

// FailoverConfig configures failover to mapped alternatives.
type FailoverConfig struct {
	// Mappings is a mappings file or a tool index (.db); "" disables
	// failover.
	Mappings string `json:"mappings" flag:"failover" path:"file" help:"re-route calls whose backend fails (down, rate-limited, timed out, gone) to mapped alternatives: a mappings file (toolenv map match/index --mappings-out) or a tool index (.db)"`
	// MinScore is the lowest mapping score used (reviewed mappings need
	// none).
	MinScore float64 `json:"min_score" flag:"failover-min-score" default:"0.6" help:"lowest mapping score failover uses (reviewed mappings need none)"`
}

// RepairConfig configures drift repair.
type RepairConfig struct {
	// Base repairs calls written against the base version of each
	// drifted collection loaded.
	Base bool `json:"base" flag:"repair" help:"repair calls written against the documentation of a drifted collection's base version, through the structural mapping between the two versions' documentation"`
	// From are older collection folders whose documentation calls may
	// be written against.
	From []string `json:"from" flag:"repair-from" path:"file" help:"repair calls written against this older collection folder's documentation (repeatable; matched to a loaded collection by name)"`
}

// ServerConfig configures the HTTP front-ends. Open never listens: Addr
// is for the program that does (toolenv serve).
type ServerConfig struct {
	// Addr is where toolenv serve listens.
	Addr string `json:"addr" flag:"addr" default:"127.0.0.1:8080" help:"address to listen on"`
	// BaseURL is the public URL written into OpenAPI documents; "" means
	// the request's host.
	BaseURL string `json:"base_url" flag:"base-url" url:"http" help:"public URL of the server, written into OpenAPI documents (default: the request's host)"`
	// MaxBody bounds request bodies; 0 means 1 MiB.
	MaxBody int64 `json:"max_body" flag:"max-body" default:"1048576" help:"largest request body accepted, in bytes"`
	// AuthTokenEnv names the environment variable holding the bearer
	// token(s) clients must send (several: separated by commas); "" means
	// none, which only a loopback Addr allows.
	AuthTokenEnv string `json:"auth_token_env" flag:"auth-token-env" help:"environment variable holding the bearer token clients must send (Authorization: Bearer ...; several separated by commas, each its own client); required when --addr is not a loopback address"`
	// AllowedHosts are Host names accepted besides loopback names and the
	// address a client connected to: "example.org", "*.example.org", "*".
	AllowedHosts []string `json:"allowed_hosts" flag:"allowed-host" help:"a Host name clients may use besides loopback names and the server's address (the public name behind a load balancer; *.example.org for subdomains; repeatable)"`
	// MaxSessions caps the live task sessions and, separately, the live
	// MCP sessions; 0 means 4096, -1 no cap. With task sessions in the
	// store (Config.Sessions) the cap on them is the fleet's.
	MaxSessions int `json:"max_sessions" flag:"max-sessions" default:"4096" help:"most live sessions (SLOT/SEL task sessions, of the whole fleet when they are in the store, and MCP sessions); a new one evicts the idlest not in use, or is refused with 503 when all are in use; -1: no cap"`
	// ClientSessionIDs accepts task-session ids the client names (the
	// protocol before server-issued ids), scoped to its token.
	ClientSessionIDs bool `json:"client_session_ids" flag:"client-session-ids" help:"also accept X-Toolenv-Session ids the client names itself (old clients), scoped to the caller's token; by default only ids the server issued (POST /sessions) are accepted"`
	// MaxConns caps the connections open at once; 0 means 1024, -1 no
	// cap.
	MaxConns int `json:"max_conns" flag:"max-conns" default:"1024" help:"most connections open at once (over it: 503 at once); -1: no cap"`
	// MaxConnsPerClient caps the connections of one remote address; 0
	// means 256, -1 no cap (behind a proxy, where every client has its
	// address).
	MaxConnsPerClient int `json:"max_conns_per_client" flag:"max-conns-per-client" default:"256" help:"most connections one client (remote address) holds at once (over it: 429 at once); -1: no cap (behind a proxy, where every client has the proxy's address)"`
	// ReserveConns are connections beyond MaxConns kept for /healthz and
	// /metrics; 0 means 16, -1 none.
	ReserveConns int `json:"reserve_conns" flag:"reserve-conns" default:"16" help:"connections kept beyond --max-conns for /healthz and /metrics, so health checks and scrapes get in when the cap is full; -1: none"`
	// HeaderTimeout bounds reading a request's headers: a connection
	// that sends none is closed after it; 0 means 10 s.
	HeaderTimeout time.Duration `json:"header_timeout" flag:"header-timeout" default:"10s" help:"longest a client may take to send a request's headers before its connection is closed (a connection that sends nothing holds one of --max-conns until then)"`
	// MaxSessionsPerClient caps the live sessions of each kind one client
	// (its token, or its address without one) holds; 0 means 1024, -1 no
	// cap.
	MaxSessionsPerClient int `json:"max_sessions_per_client" flag:"max-sessions-per-client" default:"1024" help:"most live sessions of each kind (in-memory SLOT/SEL task sessions, MCP sessions) one client (its token, or its address without one) holds: a new one evicts that client's idlest not in use, or is refused with 429 when all are in use; -1: no cap"`
	// MaxStreamsPerClient caps the MCP event streams (GET /mcp) one
	// client holds open; 0 means 64, -1 no cap.
	MaxStreamsPerClient int `json:"max_streams_per_client" flag:"max-streams-per-client" default:"64" help:"most MCP event streams (GET /mcp) one client (its token, or its address without one) holds open (over it: 429); -1: no cap"`
	// StreamIdle closes an MCP event stream that sent nothing this long;
	// 0 means 5 min, negative never.
	StreamIdle time.Duration `json:"stream_idle" flag:"stream-idle" default:"5m" help:"close an MCP event stream (GET /mcp) that sent nothing this long (the client opens another); negative: never"`
	// StreamMaxLifetime closes an MCP event stream this long after it
	// opened; 0 means 1 h, negative never.
	StreamMaxLifetime time.Duration `json:"stream_max_lifetime" flag:"stream-max-lifetime" default:"1h" help:"close an MCP event stream (GET /mcp) this long after it opened (the client opens another); negative: never"`
	// MaxEpisodes caps the RL episodes open at once in this process
	// (/openenv, docs/episodes.md); 0 means 10,000, -1 no cap.
	MaxEpisodes int `json:"max_episodes" flag:"max-episodes" default:"10000" help:"most RL episodes open at once (/openenv: OpenEnv's protocol and MCP episodes); a reset over it is refused with 503, an open episode is never evicted; -1: no cap"`
	// EpisodeIdle expires RL episodes unused this long; 0 means 30
	// minutes, negative never.
	EpisodeIdle time.Duration `json:"episode_idle" flag:"episode-idle" default:"30m" help:"expire RL episodes unused this long (a later step is told it expired); negative: never"`
	// EpisodeMaxSteps is the step limit of RL episodes that set none; 0
	// means 50.
	EpisodeMaxSteps int `json:"episode_max_steps" flag:"episode-max-steps" default:"50" help:"step limit of RL episodes whose reset sets none (max_steps); the episode ends truncated there"`
	// MaxEpisodesPerClient caps the RL episodes one client (its token,
	// or its address without one) holds open; 0 means half of
	// MaxEpisodes, -1 no cap of its own.
	MaxEpisodesPerClient int `json:"max_episodes_per_client" flag:"max-episodes-per-client" help:"most RL episodes one client (its token, or its address without tokens) holds open, so that one client cannot take every slot of --max-episodes (over it: 503 naming this flag); default: half of --max-episodes; -1: no cap of its own"`
	// EpisodeMaxStepsCeiling is the largest step limit a reset may ask
	// for; 0 means 1000.
	EpisodeMaxStepsCeiling int `json:"episode_max_steps_ceiling" flag:"episode-max-steps-ceiling" default:"1000" help:"largest max_steps a reset may ask for (an episode keeps every step's answers); above it the reset is refused"`
	// EpisodeMaxCalls caps the tool calls of one step; 0 means 32.
	EpisodeMaxCalls int `json:"episode_max_calls" flag:"episode-max-calls" default:"32" help:"most tool calls in one RL episode step (over it the step is refused with 422)"`
	// EpisodeMaxStepBytes caps the bytes of one step's answers; 0 means
	// 1 MiB.
	EpisodeMaxStepBytes int `json:"episode_max_step_bytes" flag:"episode-max-step-bytes" default:"1048576" help:"most bytes the answers of one RL episode step may come to; a step whose calls answer more is cut (it does not happen) and refused with 413"`
	// EpisodeRecordBytes bounds the memory the records of ended RL
	// episodes hold; 0 means 64 MiB, -1 none.
	EpisodeRecordBytes int64 `json:"episode_record_bytes" flag:"episode-record-bytes" default:"67108864" help:"memory the records of ended RL episodes may hold in this process (the newest are kept; every ended episode is also written to the store, where toolenv episodes export reads it); -1: none kept in memory"`
	// WSIdle closes an /openenv WebSocket that sent no message this
	// long; 0 means 5 minutes, negative never.
	WSIdle time.Duration `json:"ws_idle" flag:"ws-idle" default:"5m" help:"close an /openenv/ws WebSocket that sent no message this long while no answer was due (its episode is closed); negative: never"`
	// WSMaxLifetime closes an /openenv WebSocket this long after it
	// opened; 0 means 2 hours, negative never.
	WSMaxLifetime time.Duration `json:"ws_max_lifetime" flag:"ws-max-lifetime" default:"2h" help:"close an /openenv/ws WebSocket this long after it opened (its episode is closed; the client reconnects); negative: never"`
	// MaxWSPerClient caps the /openenv WebSockets one client holds open;
	// 0 means 64, -1 no cap.
	MaxWSPerClient int `json:"max_ws_per_client" flag:"max-ws-per-client" default:"64" help:"most /openenv/ws WebSockets one client (its token, or its address without tokens) holds open (over it: 429); -1: no cap"`
	// EpisodeJudgeURL is the OpenAI-compatible endpoint of the judge
	// behind the pass_rate reward of RL episodes; "" offers none.
	EpisodeJudgeURL string `json:"episode_judge_url" flag:"episode-judge-url" url:"http" help:"OpenAI-compatible endpoint of the judge behind the pass_rate reward of RL episodes (StableToolBench's SoPR prompts); empty: pass_rate is refused"`
	// EpisodeJudgeModel is the judge's model name.
	EpisodeJudgeModel string `json:"episode_judge_model" flag:"episode-judge-model" help:"the model name the judge endpoint serves"`
	// EpisodeJudgeKeyEnv names the environment variable holding the
	// judge endpoint's API key.
	EpisodeJudgeKeyEnv string `json:"episode_judge_key_env" flag:"episode-judge-key-env" help:"environment variable holding the judge endpoint's API key"`
}

// MCPConfig configures the MCP server.
type MCPConfig struct {
	// Names is the tool naming: auto (own names, <collection>__<name>
	// where names collide) or prefixed; "" means auto.
	Names string `json:"names" flag:"mcp-names" default:"auto" enum:",auto,prefixed" help:"MCP tool names: auto (own names, <collection>__<name> where names collide) or prefixed (always <collection>__<name>)"`
	// PageSize is how many tools one tools/list page holds; 0 means
	// server.DefaultMCPPageSize, -1 every tool in one page.
	PageSize int `json:"page_size" flag:"mcp-page-size" default:"1000" help:"tools per MCP tools/list page (the next page's cursor in nextCursor); -1: every tool in one page"`
	// SearchAbove is the number of listed tools above which the
	// search_tools tool is offered; 0 means server.DefaultMCPSearchAbove,
	// -1 never.
	SearchAbove int `json:"search_above" flag:"mcp-search-above" default:"1000" help:"offer the MCP search_tools tool when more tools than this are listed; -1: never"`
	// EmbedURL is an OpenAI-compatible embeddings endpoint: search_tools
	// then ranks by BM25 and the cosine of the tools' embeddings fused
	// (reciprocal rank fusion); "" means BM25 only.
	EmbedURL string `json:"embed_url" flag:"search-embed-url" url:"http" help:"OpenAI-compatible embeddings endpoint (e.g. http://127.0.0.1:8000/v1) for search_tools: the tools' names and descriptions are embedded in the background and searches rank by BM25 and cosine fused; empty: BM25 only"`
	// EmbedModel is the embedding model the endpoint serves (required
	// with EmbedURL).
	EmbedModel string `json:"embed_model" flag:"search-embed-model" help:"embedding model served at --search-embed-url"`
	// EmbedKeyEnv names the environment variable holding the endpoint's
	// API key.
	EmbedKeyEnv string `json:"embed_key_env" flag:"search-embed-key-env" default:"OPENAI_API_KEY" help:"environment variable holding the API key of --search-embed-url"`
}

// Default returns the configuration toolenv's commands start from: the
// defaults of their flags, with the store and the image cache in the
// user's cache folder.
func Default() Config {
	var c Config
	configfile.Defaults(&c)
	c.Store = defaultStorePath()
	c.ImageCache = rodb.DefaultCacheDir()
	return c
}

// defaultStorePath is $XDG_CACHE_HOME/toolenv/store.db (or the OS's user
// cache folder), else ./.toolenv/store.db.
func defaultStorePath() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "toolenv", "store.db")
	}
	return filepath.Join(".toolenv", "store.db")
}
