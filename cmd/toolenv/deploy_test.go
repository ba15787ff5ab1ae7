package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// The deployment files under deploy/ are checked against the program they
// deploy: every toolenv argument they pass must be a real flag of the
// command it names, with a value the flag accepts; the ports, probes and
// Host names must agree with what serve listens on and accepts.

const deployDir = "../../deploy"

// k8sDoc is the part of a Kubernetes object the checks read.
type k8sDoc struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec struct {
		Replicas *int `yaml:"replicas"`
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Template podTemplate `yaml:"template"`
		// Service
		ServiceSelector map[string]string `yaml:"-"`
		Ports           []struct {
			Name       string `yaml:"name"`
			Port       int    `yaml:"port"`
			TargetPort any    `yaml:"targetPort"`
		} `yaml:"ports"`
	} `yaml:"spec"`
	raw map[string]any
}

type podTemplate struct {
	Metadata struct {
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec struct {
		RestartPolicy string      `yaml:"restartPolicy"`
		Containers    []container `yaml:"containers"`
	} `yaml:"spec"`
}

type container struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	ReadinessProbe *httpProbe `yaml:"readinessProbe"`
	LivenessProbe  *httpProbe `yaml:"livenessProbe"`
	Resources      struct {
		Limits map[string]string `yaml:"limits"`
	} `yaml:"resources"`
}

type httpProbe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port any    `yaml:"port"`
	} `yaml:"httpGet"`
}

// envValue is the literal value of the container's variable name, "" if
// it sets none.
func envValue(c container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// byteSize reads a size as GOMEMLIMIT ("800MiB") or a Kubernetes quantity
// ("1Gi") writes it, in bytes.
func byteSize(t *testing.T, s string) int64 {
	t.Helper()
	units := []struct {
		suffix string
		n      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.n
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("size %q: %v", s, err)
	}
	return n * mult
}

func (c *container) envNames() []string {
	var names []string
	for _, e := range c.Env {
		names = append(names, e.Name)
	}
	return names
}

// readManifest decodes every document of a multi-document YAML file.
func readManifest(t *testing.T, path string) []*k8sDoc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*k8sDoc
	for {
		var node yaml.Node
		err := dec.Decode(&node)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		d := &k8sDoc{}
		if err := node.Decode(d); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := node.Decode(&d.raw); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if sel, ok := d.raw["spec"].(map[string]any)["selector"].(map[string]any); ok && d.Kind == "Service" {
			d.Spec.ServiceSelector = map[string]string{}
			for k, v := range sel {
				d.Spec.ServiceSelector[k], _ = v.(string)
			}
		}
		docs = append(docs, d)
	}
	return docs
}

// parseToolenvArgs resolves args to a toolenv command and parses its
// flags as the program would, failing the test on any unknown flag or
// bad value. It returns the command.
func parseToolenvArgs(t *testing.T, where string, args []string) *cobra.Command {
	t.Helper()
	root := newRootCmd(&env{stdout: io.Discard, stderr: io.Discard, getenv: os.Getenv})
	cmd, rest, err := root.Find(args)
	if err != nil || cmd == root {
		t.Fatalf("%s: %q is not a toolenv command: %v", where, args, err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatalf("%s: toolenv %s: %v", where, cmd.Name(), err)
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		t.Fatalf("%s: toolenv %s: %v", where, cmd.Name(), err)
	}
	return cmd
}

// flagValues returns every value given to a flag (repeatable ones too).
func flagValues(t *testing.T, cmd *cobra.Command, name string) []string {
	t.Helper()
	f := cmd.Flags().Lookup(name)
	if f == nil {
		t.Fatalf("toolenv %s has no flag --%s", cmd.Name(), name)
	}
	if sv, ok := f.Value.(interface{ GetSlice() []string }); ok {
		return sv.GetSlice()
	}
	return []string{f.Value.String()}
}

func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	return n
}

// TestKubernetesManifest (issue 11 item 2): the Job migrates the store and
// the Deployment serves, each with real flags; the store and the token
// come from the environment the pods get; the probes and the Service reach
// the port serve listens on; the selector selects the pods.
func TestKubernetesManifest(t *testing.T) {
	docs := readManifest(t, filepath.Join(deployDir, "kubernetes", "toolenv.yaml"))
	byKind := map[string]*k8sDoc{}
	for _, d := range docs {
		if byKind[d.Kind] != nil {
			t.Fatalf("two %s objects; the checks expect one of each", d.Kind)
		}
		byKind[d.Kind] = d
	}
	job, dep, svc := byKind["Job"], byKind["Deployment"], byKind["Service"]
	if job == nil || dep == nil || svc == nil {
		t.Fatalf("want a Job, a Deployment and a Service; got %v", slices.Collect(func(yield func(string) bool) {
			for k := range byKind {
				yield(k)
			}
		}))
	}

	// The Job runs toolenv store migrate on the store the replicas use.
	if len(job.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("the Job has %d containers, want 1", len(job.Spec.Template.Spec.Containers))
	}
	jc := job.Spec.Template.Spec.Containers[0]
	if jcmd := parseToolenvArgs(t, "Job", jc.Args); jcmd.CommandPath() != "toolenv store migrate" {
		t.Fatalf("the Job runs %q, want toolenv store migrate", jcmd.CommandPath())
	}
	if rp := job.Spec.Template.Spec.RestartPolicy; rp != "OnFailure" && rp != "Never" {
		t.Fatalf("a Job's pods need restartPolicy OnFailure or Never, not %q", rp)
	}

	// The Deployment runs toolenv serve.
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas < 2 {
		t.Fatalf("the Deployment should run several replicas: %v", dep.Spec.Replicas)
	}
	if len(dep.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("the Deployment has %d containers, want 1", len(dep.Spec.Template.Spec.Containers))
	}
	c := dep.Spec.Template.Spec.Containers[0]
	serve := parseToolenvArgs(t, "Deployment", c.Args)
	if serve.CommandPath() != "toolenv serve" {
		t.Fatalf("the Deployment runs %q, want toolenv serve", serve.CommandPath())
	}
	if c.Image != jc.Image {
		t.Fatalf("the Job migrates with %s but the replicas run %s: the schema would not be theirs", jc.Image, c.Image)
	}
	for _, cc := range []container{jc, c} {
		names := cc.envNames()
		// Without --store, TOOLENV_STORE names the store: both must use it.
		if !slices.Contains(names, "TOOLENV_STORE") || serve.Flags().Changed("store") {
			t.Fatalf("container %s: the store must come from TOOLENV_STORE (env %v)", cc.Name, names)
		}
	}
	if store := func() string {
		for _, cc := range []container{jc, c} {
			for _, e := range cc.Env {
				if e.Name == "TOOLENV_STORE" && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
					return cc.Name
				}
			}
		}
		return ""
	}(); store != "" {
		t.Fatalf("container %s: TOOLENV_STORE holds the database password; take it from a Secret", store)
	}
	if !slices.Equal(valueRefs(jc, "TOOLENV_STORE"), valueRefs(c, "TOOLENV_STORE")) {
		t.Fatalf("the Job and the replicas read TOOLENV_STORE from different secrets: %v, %v", valueRefs(jc, "TOOLENV_STORE"), valueRefs(c, "TOOLENV_STORE"))
	}
	// The Go runtime's soft memory limit sits below the container's.
	if got, limit := envValue(c, "GOMEMLIMIT"), c.Resources.Limits["memory"]; got != "" {
		g, l := byteSize(t, got), byteSize(t, limit)
		if g <= 0 || g >= l {
			t.Errorf("GOMEMLIMIT=%s is not below the container's memory limit %s", got, limit)
		}
	}
	// Every environment variable a flag names is set.
	serve.Flags().Visit(func(f *pflag.Flag) {
		if strings.HasSuffix(f.Name, "-env") && !slices.Contains(c.envNames(), f.Value.String()) {
			t.Errorf("--%s=%s but the container sets no %s", f.Name, f.Value.String(), f.Value.String())
		}
	})
	// Listening beyond loopback needs a token (serve refuses otherwise).
	addr := flagValues(t, serve, "addr")[0]
	if !serve.Flags().Changed("auth-token-env") {
		t.Fatalf("serve --addr %s is not loopback: it needs --auth-token-env", addr)
	}
	port := portOf(t, addr)
	ports := map[string]int{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if !slices.Contains(slices.Collect(mapValues(ports)), port) {
		t.Fatalf("serve listens on %d but the container declares ports %v", port, ports)
	}
	resolve := func(what string, v any) int {
		switch p := v.(type) {
		case int:
			return p
		case string:
			if n, ok := ports[p]; ok {
				return n
			}
		}
		t.Fatalf("%s: port %v is not a port of the container (%v)", what, v, ports)
		return 0
	}
	for name, pr := range map[string]*httpProbe{"readinessProbe": c.ReadinessProbe, "livenessProbe": c.LivenessProbe} {
		if pr == nil || pr.HTTPGet == nil {
			t.Fatalf("the container has no %s.httpGet", name)
		}
		if resolve(name, pr.HTTPGet.Port) != port {
			t.Fatalf("%s probes port %v, serve listens on %d", name, pr.HTTPGet.Port, port)
		}
	}

	// The Service selects the pods and forwards to serve's port.
	for k, v := range svc.Spec.ServiceSelector {
		if dep.Spec.Template.Metadata.Labels[k] != v {
			t.Fatalf("the Service selects %s=%s, which the pods do not carry (%v)", k, v, dep.Spec.Template.Metadata.Labels)
		}
	}
	for k, v := range dep.Spec.Selector.MatchLabels {
		if dep.Spec.Template.Metadata.Labels[k] != v {
			t.Fatalf("the Deployment selects %s=%s, which its pods do not carry", k, v)
		}
	}
	if len(svc.Spec.ServiceSelector) == 0 || len(svc.Spec.Ports) == 0 {
		t.Fatal("the Service has no selector or no ports")
	}
	for _, p := range svc.Spec.Ports {
		if resolve("Service", p.TargetPort) != port {
			t.Fatalf("the Service forwards to %v, serve listens on %d", p.TargetPort, port)
		}
	}

	// The same arguments, run: the probe's path answers without a token,
	// everything else needs one, and the Host names the manifest allows
	// (the Service's name among them) are accepted.
	token := "manifest-test-token"
	t.Setenv("TOOLENV_TOKEN", token)
	var args []string
	for _, a := range c.Args[1:] {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "addr", "toolbench", "llm-url", "llm-model": // a loopback port, the demo, no model
			continue
		}
		args = append(args, a)
	}
	r := startReplica(t, append(args, "--store", filepath.Join(t.TempDir(), "s.db"))...)
	get := func(path, host, tok string) int {
		req, _ := http.NewRequest("GET", r.base+path, nil)
		if host != "" {
			req.Host = host
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(c.ReadinessProbe.HTTPGet.Path, "", ""); code != 200 {
		t.Fatalf("the probe's %s without a token: %d, want 200", c.ReadinessProbe.HTTPGet.Path, code)
	}
	if code := get("/collections", svc.Metadata.Name, ""); code != http.StatusUnauthorized {
		t.Fatalf("/collections without a token: %d, want 401", code)
	}
	for _, h := range append(flagValues(t, serve, "allowed-host"), svc.Metadata.Name) {
		host := strings.Replace(h, "*", "toolenv.default", 1)
		if code := get("/collections", host, token); code != 200 {
			t.Fatalf("Host %s (allowed by the manifest): %d, want 200", host, code)
		}
	}
	if code := get("/collections", "evil.example", token); code != http.StatusForbidden {
		t.Fatalf("a foreign Host: %d, want 403", code)
	}
}

func valueRefs(c container, name string) []string {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			return []string{e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key}
		}
	}
	return nil
}

func mapValues[K comparable, V any](m map[K]V) func(func(V) bool) {
	return func(yield func(V) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

// TestHAProxyConfig: the load balancer's example replicas run real serve
// flags; it forwards to the port they listen on, checks their health on a
// route that answers without a token and with a Host they accept, and
// waits on a call longer than serve's own budget for one.
func TestHAProxyConfig(t *testing.T) {
	path := filepath.Join(deployDir, "haproxy.cfg")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		command  []string // the replicas' command, from the header comment
		inCmd    bool
		section  string
		servers  = map[string][]string{}
		checks   = map[string]string{}
		timeouts = map[string]time.Duration{}
		backends []string
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if c, ok := strings.CutPrefix(line, "#"); ok {
			c = strings.TrimSpace(c)
			if strings.HasPrefix(c, "toolenv serve ") {
				inCmd = true
			}
			if inCmd {
				more := strings.HasSuffix(c, `\`)
				command = append(command, strings.Fields(strings.TrimSuffix(c, `\`))...)
				inCmd = more
			}
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "global", "defaults", "frontend", "backend", "listen":
			section = strings.Join(fields, " ")
			if fields[0] == "backend" {
				backends = append(backends, fields[1])
			}
			continue
		}
		switch {
		case fields[0] == "server" && len(fields) >= 3:
			servers[section] = append(servers[section], fields[2])
		case fields[0] == "http-check" && len(fields) > 1 && fields[1] == "send":
			checks[section] = line
		case fields[0] == "timeout" && len(fields) == 3:
			d, err := time.ParseDuration(fields[2])
			if err != nil {
				t.Fatalf("%s: %q: %v", path, line, err)
			}
			timeouts[fields[1]] = d
		case fields[0] == "use_backend" || fields[0] == "default_backend":
			if !slices.Contains(fields, "toolenv") && !slices.Contains(fields, "toolenv_mcp") {
				t.Fatalf("%s: %q names an unknown backend", path, line)
			}
		}
	}
	if len(command) < 2 {
		t.Fatalf("%s: no '# toolenv serve …' command in its header", path)
	}
	serve := parseToolenvArgs(t, "haproxy.cfg", command[1:])
	port := portOf(t, flagValues(t, serve, "addr")[0])
	allowed := flagValues(t, serve, "allowed-host")
	if len(backends) == 0 {
		t.Fatalf("%s: no backend", path)
	}
	for _, b := range backends {
		sec := "backend " + b
		if len(servers[sec]) < 2 {
			t.Fatalf("%s: %d servers, want the replicas", sec, len(servers[sec]))
		}
		for _, s := range servers[sec] {
			if portOf(t, s) != port {
				t.Fatalf("%s: server %s, but the replicas listen on %d", sec, s, port)
			}
		}
		chk := strings.Fields(checks[sec])
		i := slices.Index(chk, "uri")
		h := slices.Index(chk, "Host")
		if i < 0 || h < 0 || i+1 >= len(chk) || h+1 >= len(chk) {
			t.Fatalf("%s: the health check must send a uri and a Host (serve refuses a request without one): %q", sec, checks[sec])
		}
		if chk[i+1] != "/healthz" {
			t.Fatalf("%s: health check on %s; serve's health route, open without a token, is /healthz", sec, chk[i+1])
		}
		if !slices.Contains(allowed, chk[h+1]) {
			t.Fatalf("%s: the health check's Host %s is not among the replicas' --allowed-host %v", sec, chk[h+1], allowed)
		}
	}
	budget, err := time.ParseDuration(serve.Flags().Lookup("timeout").Value.String())
	if err != nil {
		t.Fatal(err)
	}
	if timeouts["server"] <= budget || timeouts["client"] <= budget {
		t.Fatalf("timeout server %s / client %s must exceed serve's --timeout %s, or the balancer cuts calls serve is still answering", timeouts["server"], timeouts["client"], budget)
	}
}
