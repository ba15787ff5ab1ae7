package eval

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/promptfile"
)

// RunInfo says what an evaluation ran; it is written to run.json.
type RunInfo struct {
	Agent       string   `json:"agent"`
	Model       string   `json:"model"`
	ModelURL    string   `json:"model_url,omitempty"`
	Tasks       []string `json:"tasks"`
	TaskCount   int      `json:"task_count"`
	Runs        int      `json:"runs"`
	Concurrency int      `json:"concurrency"`
	Seed        int64    `json:"seed"`
	Shard       Shard    `json:"shard"`
	Temperature *float64 `json:"temperature,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	// AgentOptions are the agent's settings (budget, style, limits).
	AgentOptions map[string]any `json:"agent_options,omitempty"`
	Judge        *JudgeInfo     `json:"judge,omitempty"`
	// Env says where tools ran: "in-process" or a server URL.
	Env     string `json:"env"`
	Replay  bool   `json:"replay,omitempty"`
	Records string `json:"records,omitempty"`
	// Prompts are the prompt files in use (agent and judge), with their
	// versions and hashes.
	Prompts []promptfile.Prompt `json:"prompts"`
	// Skipped lists task-file lines that could not be read.
	Skipped []string `json:"skipped,omitempty"`
	Command []string `json:"command,omitempty"`
	Version string   `json:"toolenv_version"`
	// Config is the effective configuration of the environment the tools
	// ran in (in-process runs), credentials hidden.
	Config   any       `json:"config,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitempty"`
	// Planned is how many episodes the run is to have: its tasks (this
	// shard's, without a queue) × Runs; 0 when unknown (a run.json
	// older than the field: TaskCount × Runs then).
	Planned int `json:"planned_episodes,omitempty"`
	// Ran, Resumed and Interrupted say how this call went; Stopped why
	// it stopped early (eval.Config.StopAfterErrors), if it did.
	Ran         int    `json:"ran"`
	Resumed     int    `json:"resumed"`
	Interrupted bool   `json:"interrupted,omitempty"`
	Stopped     string `json:"stopped,omitempty"`
	// Queue is the queue the run's episodes were shared through, if
	// any (toolenv eval --queue).
	Queue *QueueInfo `json:"queue,omitempty"`
}

// QueueInfo names a run in a queue.
type QueueInfo struct {
	// Store is the queue's store, its password removed.
	Store string `json:"store"`
	// Run is the run's name in it.
	Run string `json:"run"`
	// Status counts the run's episodes when the reports were written.
	Status *QueueStatus `json:"status,omitempty"`
}

// QueueStatus counts a queued run's episodes by state.
type QueueStatus struct {
	Pending int `json:"pending"`
	Running int `json:"running"`
	Done    int `json:"done"`
	// Errors counts finished episodes that ended with an error.
	Errors int `json:"errors"`
	// Reclaims counts claims taken over from a worker whose lease ran
	// out (it died); Retries the attempts beyond the first.
	Reclaims int `json:"reclaims"`
	Retries  int `json:"retries"`
}

// JudgeInfo describes the judge.
type JudgeInfo struct {
	Model  string `json:"model"`
	URL    string `json:"url,omitempty"`
	Rounds int    `json:"rounds"`
	SoPR   bool   `json:"sopr"`
	FAC    bool   `json:"fac"`
}

// RunInfoFile is run.json's name (run-<i>-of-<n>.json for a shard).
func RunInfoFile(s Shard) string {
	if s.Count <= 1 {
		return "run.json"
	}
	return fmt.Sprintf("run-%d-of-%d.json", s.Index, s.Count)
}

// WriteRunInfo writes info into dir.
func WriteRunInfo(dir string, info *RunInfo) error {
	return toolenv.WriteJSONFile(filepath.Join(dir, RunInfoFile(info.Shard)), info)
}

// ReadRunInfo reads the run.json (or the first shard's) in dir.
func ReadRunInfo(dir string) (*RunInfo, error) {
	paths, _ := filepath.Glob(filepath.Join(dir, "run*.json"))
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s holds no run.json: is it an eval output folder?", dir)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		return nil, err
	}
	var info RunInfo
	if err := toolenv.DecodeJSON(data, &info); err != nil {
		return nil, fmt.Errorf("%s: %w", paths[0], err)
	}
	return &info, nil
}
