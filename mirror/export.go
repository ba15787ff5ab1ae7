package mirror

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/simulate"
	"github.com/toolenv/toolenv/internal/pyfmt"
)

// RequestText is a call as the explain prompt's {api_request} shows it:
// the request in MirrorAPI's training form, as json.dumps writes it.
func RequestText(t *toolenv.Tool, args map[string]any) string { return simulate.RequestJSON(t, args) }

// ResponseText is an answer in the {"error", "response"} form: the SFT
// sample's assistant turn and the explain prompt's {api_response}.
func ResponseText(body json.RawMessage, errMsg string) string {
	return simulate.AssistantTurn(errMsg, body)
}

// CoTOutput is the CoT sample's assistant turn: the rationale as
// "mechanism_of_the_api", then the error and the response.
func CoTOutput(rationale string, body json.RawMessage, errMsg string) string {
	return simulate.CoTAssistantTurn(rationale, errMsg, body)
}

// Export files, relative to ExportOptions.Out.
const (
	FileTrainOpenAI   = "train.openai.jsonl"   // {"messages": [...]}: OpenAI fine-tuning, TRL, axolotl ("chat_template")
	FileTrainShareGPT = "train.sharegpt.jsonl" // {"conversations": [{"from", "value"}]}: LLaMA-Factory, FastChat, axolotl ("sharegpt")
	FileDatasetInfo   = "dataset_info.json"    // LLaMA-Factory's description of both files
	FileCard          = "README.md"            // the dataset card
	FileCardJSON      = "card.json"            // the card's figures as JSON
	DirBench          = "bench"                // MirrorAPI-Bench: <split>.jsonl pairs and <split>.messages.jsonl prompts
)

// ExportOptions configure the export stage.
type ExportOptions struct {
	// Out is the folder the files are written to.
	Out string
	// Seed orders the mixed training samples.
	Seed int64
	// NoCoT leaves the CoT samples out.
	NoCoT bool
	// Card describes the run for the dataset card.
	Card CardInfo
}

// CardInfo is what the dataset card says about where the data came
// from, beyond what the store holds.
type CardInfo struct {
	// Name is the dataset's name.
	Name string `json:"name"`
	// Sources describes the collections mirrored ("bird-rest: 263 tools
	// from out/bird/rest").
	Sources []string `json:"sources"`
	// Commands are the commands that made the dataset.
	Commands []string `json:"commands,omitempty"`
	// Seeds names every seed used.
	Seeds map[string]int64 `json:"seeds"`
	// Model is the model behind the model-facing stages ("" for none).
	Model string `json:"model,omitempty"`
	// Toolenv is the toolenv that made the data (version, revision, Go)
	// with its effective configuration (RunOptions.Config and the
	// sources' settings; no secret, and nothing that differs between a
	// run and its replay, so that a replay writes the same card).
	Toolenv *toolenv.Provenance `json:"toolenv,omitempty"`
}

// ExportStats says what was written.
type ExportStats struct {
	SFT   int            `json:"sft"`
	CoT   int            `json:"cot"`
	Bench map[string]int `json:"bench"`
	Files []string       `json:"files"`
}

// message is one chat message of an exported sample.
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Export writes the training samples (SFT for every training pair, CoT
// for those with a kept rationale, with the exact Table 10 and Table 11
// system prompts, mixed as the paper mixes them: all of both, spread
// evenly through one file in a seeded order), the benchmark splits, and
// the dataset card. It streams: memory does not grow with the pairs.
func (e *Engine) Export(ctx context.Context, opts ExportOptions) (*ExportStats, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if opts.Out == "" {
		return nil, fmt.Errorf("export: no output folder")
	}
	started := time.Now()
	if err := os.MkdirAll(filepath.Join(opts.Out, DirBench), 0o755); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	stats, err := e.Store.PairStats(ctx, e.Dataset)
	if err != nil {
		return nil, err
	}
	nSFT, nCoT := 0, 0
	for _, s := range stats {
		if s.Split == SplitTrain {
			nSFT += s.Count
			if s.Rationale {
				nCoT += s.Count
			}
		}
	}
	if opts.NoCoT {
		nCoT = 0
	}
	st := &ExportStats{Bench: map[string]int{}}
	bar := e.bar(nSFT+nCoT, "export training samples")
	if err := e.exportTrain(ctx, opts, nSFT, nCoT, st, bar); err != nil {
		bar.Finish()
		return nil, fmt.Errorf("export: %w", err)
	}
	bar.Finish()
	for _, split := range TestSplits {
		n, err := e.exportBench(ctx, opts.Out, split)
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", split, err)
		}
		st.Bench[split] = n
		st.Files = append(st.Files, filepath.Join(DirBench, split+".jsonl"), filepath.Join(DirBench, split+".messages.jsonl"))
	}
	st.Files = append([]string{FileTrainOpenAI, FileTrainShareGPT}, st.Files...)
	raw, _ := json.Marshal(st)
	if err := e.Store.SetMeta(ctx, e.Dataset, "export", string(raw)); err != nil {
		return nil, err
	}
	if err := writeDatasetInfo(opts.Out); err != nil {
		return nil, err
	}
	sum, err := e.Summary(ctx)
	if err != nil {
		return nil, err
	}
	if err := WriteCard(opts.Out, sum, opts.Card); err != nil {
		return nil, err
	}
	st.Files = append(st.Files, FileDatasetInfo, FileCard, FileCardJSON)
	e.stageDone(ctx, "export", started)
	return st, nil
}

// trainSample is one training sample, its turns JSON-encoded.
type trainSample struct {
	cot             bool
	user, assistant []byte
	err             error
}

// render is a sample being rendered: the worker that renders it sends it
// on the channel, and the writer takes the samples in their order.
type render chan trainSample

// exportTrain writes the mixed training files: the SFT stream and the
// CoT stream, each in its own seeded order, interleaved so that the CoT
// share is the same all through the file. Samples are rendered by a
// worker per CPU and written in order.
func (e *Engine) exportTrain(ctx context.Context, opts ExportOptions, nSFT, nCoT int, st *ExportStats, bar interface{ Add(int) }) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	docs := newDocCache(e)
	type task struct {
		p   *Pair
		cot bool
		out render
	}
	tasks := make(chan task, 1024)
	var workers sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for t := range tasks {
				s, err := docs.sample(t.p, t.cot)
				s.err = err
				t.out <- s
			}
		}()
	}
	stream := func(q PairQuery, cot bool, out chan<- render, errp *error) {
		defer close(out)
		*errp = e.Store.EachPair(ctx, e.Dataset, q, func(p *Pair) error {
			r := make(render, 1)
			select {
			case tasks <- task{p: p, cot: cot, out: r}:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case out <- r:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}
	sftc, cotc := make(chan render, 1024), make(chan render, 1024)
	var sftErr, cotErr error
	var streams sync.WaitGroup
	streams.Add(1)
	go func() {
		defer streams.Done()
		stream(PairQuery{Splits: []string{SplitTrain}, Order: OrderMix, Seed: opts.Seed}, false, sftc, &sftErr)
	}()
	if nCoT > 0 {
		streams.Add(1)
		go func() {
			defer streams.Done()
			stream(PairQuery{Splits: []string{SplitTrain}, WithRationale: true, Order: OrderMix, Seed: opts.Seed + 1}, true, cotc, &cotErr)
		}()
	} else {
		close(cotc)
	}
	go func() {
		streams.Wait()
		close(tasks)
	}()
	finish := func() {
		cancel()
		drain(sftc, cotc)
		streams.Wait()
		workers.Wait()
	}
	w, err := newTrainWriter(opts.Out)
	if err != nil {
		finish()
		return err
	}
	i, j := 0, 0
	for sftc != nil || cotc != nil {
		// Take a CoT sample when the CoT stream lags its share.
		takeCoT := cotc != nil && (sftc == nil || j*max(nSFT, 1) < i*nCoT || nSFT == 0)
		var r render
		var ok bool
		if takeCoT {
			if r, ok = <-cotc; !ok {
				cotc = nil
				continue
			}
			j++
		} else {
			if r, ok = <-sftc; !ok {
				sftc = nil
				continue
			}
			i++
		}
		s := <-r
		if s.err == nil {
			s.err = w.write(s)
		}
		if s.err != nil {
			finish()
			w.abort()
			return s.err
		}
		bar.Add(1)
	}
	streams.Wait()
	workers.Wait()
	if err := w.close(); err != nil {
		return err
	}
	if sftErr != nil {
		return sftErr
	}
	if cotErr != nil {
		return cotErr
	}
	st.SFT, st.CoT = i, j
	return nil
}

// drain empties the channels in the background, so that their senders
// can end.
func drain(cs ...chan render) {
	for _, c := range cs {
		if c == nil {
			continue
		}
		go func(c chan render) {
			for range c {
			}
		}(c)
	}
}

// docCache renders each tool's documentation once.
type docCache struct {
	e   *Engine
	mu  sync.Mutex
	doc map[string]string
}

func newDocCache(e *Engine) *docCache { return &docCache{e: e, doc: map[string]string{}} }

// userTurn is simulate.UserTurn with the documentation part rendered
// once per tool (TestUserTurnMatchesSimulator keeps them equal).
func (d *docCache) userTurn(t *toolenv.Tool, args map[string]any) string {
	d.mu.Lock()
	doc, ok := d.doc[t.ID]
	if !ok {
		doc = simulate.DocRepr(t)
		d.doc[t.ID] = doc
	}
	d.mu.Unlock()
	return "API doc:\n" + doc + "\n\nRequest:\n" + simulate.RequestRepr(t, args)
}

func (d *docCache) sample(p *Pair, cot bool) (trainSample, error) {
	t := d.e.tool(p.Tool)
	if t == nil {
		return trainSample{}, fmt.Errorf("pair of %s: the tool is not loaded (load its collection to export it)", p.Tool)
	}
	args, err := decodeArgs(p.Args)
	if err != nil {
		return trainSample{}, err
	}
	var asst string
	if cot {
		asst = CoTOutput(p.Rationale, p.Body, p.Error)
	} else {
		asst = ResponseText(p.Body, p.Error)
	}
	return trainSample{cot: cot, user: toolenv.AppendJSONString(nil, d.userTurn(t, args)), assistant: toolenv.AppendJSONString(nil, asst)}, nil
}

// trainWriter writes both training files at once, the system prompts
// encoded once.
type trainWriter struct {
	files     []*os.File
	openai    *bufio.Writer
	sharegpt  *bufio.Writer
	sysSFT    []byte // JSON string of the SFT system prompt
	sysCoT    []byte
	tmp, fin  []string
	closeOnce sync.Once
}

func newTrainWriter(dir string) (*trainWriter, error) {
	w := &trainWriter{
		sysSFT: toolenv.AppendJSONString(nil, simulate.SFTSystemPrompt),
		sysCoT: toolenv.AppendJSONString(nil, simulate.CoTSystemPrompt),
	}
	for _, name := range []string{FileTrainOpenAI, FileTrainShareGPT} {
		final := filepath.Join(dir, name)
		f, err := os.Create(final + ".tmp")
		if err != nil {
			w.abort()
			return nil, err
		}
		w.files = append(w.files, f)
		w.tmp = append(w.tmp, final+".tmp")
		w.fin = append(w.fin, final)
	}
	w.openai = bufio.NewWriterSize(w.files[0], 1<<20)
	w.sharegpt = bufio.NewWriterSize(w.files[1], 1<<20)
	return w, nil
}

func (w *trainWriter) write(s trainSample) error {
	sys := w.sysSFT
	if s.cot {
		sys = w.sysCoT
	}
	w.openai.WriteString(`{"messages":[{"role":"system","content":`)
	w.openai.Write(sys)
	w.openai.WriteString(`},{"role":"user","content":`)
	w.openai.Write(s.user)
	w.openai.WriteString(`},{"role":"assistant","content":`)
	w.openai.Write(s.assistant)
	w.openai.WriteString("}]}\n")
	w.sharegpt.WriteString(`{"conversations":[{"from":"system","value":`)
	w.sharegpt.Write(sys)
	w.sharegpt.WriteString(`},{"from":"human","value":`)
	w.sharegpt.Write(s.user)
	w.sharegpt.WriteString(`},{"from":"gpt","value":`)
	w.sharegpt.Write(s.assistant)
	_, err := w.sharegpt.WriteString("}]}\n")
	return err
}

// close flushes and renames the files into place. Exported files are not
// synced to disk: they are derived from the store (which is), and a
// crash before the kernel writes them out costs one re-run of export,
// while syncing would make export wait for the disk (hundreds of MB).
func (w *trainWriter) close() error {
	var err error
	w.closeOnce.Do(func() {
		for i, b := range []*bufio.Writer{w.openai, w.sharegpt} {
			if e := b.Flush(); e != nil && err == nil {
				err = e
			}
			if e := w.files[i].Close(); e != nil && err == nil {
				err = e
			}
		}
		if err != nil {
			w.abort()
			return
		}
		for i := range w.tmp {
			if e := os.Rename(w.tmp[i], w.fin[i]); e != nil && err == nil {
				err = e
			}
		}
	})
	return err
}

func (w *trainWriter) abort() {
	for _, f := range w.files {
		f.Close()
	}
	for _, t := range w.tmp {
		os.Remove(t)
	}
}

// benchPair is a line of a benchmark file: what "toolenv eval fidelity
// --pairs" reads, with the API's names and the pair's provenance.
type benchPair struct {
	Tool     string          `json:"tool"`
	Args     json.RawMessage `json:"args"`
	Response json.RawMessage `json:"response"`
	Error    string          `json:"error,omitempty"`
	Status   toolenv.Status  `json:"status"`
	Split    string          `json:"split"`
	API      string          `json:"api"`
	Category string          `json:"category,omitempty"`
	Class    string          `json:"class,omitempty"`
	Origin   string          `json:"origin"`
}

// benchMessages is a line of a benchmark's prompt file: the SFT-mode
// prompt and the real answer as the reference.
type benchMessages struct {
	Messages  []message `json:"messages"`
	Reference string    `json:"reference"`
	Tool      string    `json:"tool"`
}

// exportBench writes one test split, in (tool, args) order.
func (e *Engine) exportBench(ctx context.Context, dir, split string) (int, error) {
	pf, err := newAtomicFile(filepath.Join(dir, DirBench, split+".jsonl"))
	if err != nil {
		return 0, err
	}
	mf, err := newAtomicFile(filepath.Join(dir, DirBench, split+".messages.jsonl"))
	if err != nil {
		pf.abort()
		return 0, err
	}
	docs := newDocCache(e)
	n := 0
	err = e.Store.EachPair(ctx, e.Dataset, PairQuery{Splits: []string{split}}, func(p *Pair) error {
		t := e.tool(p.Tool)
		if t == nil {
			return fmt.Errorf("pair of %s: the tool is not loaded", p.Tool)
		}
		args, err := decodeArgs(p.Args)
		if err != nil {
			return err
		}
		resp := p.Body
		if len(resp) == 0 {
			resp = json.RawMessage(`""`)
		}
		bp := benchPair{Tool: p.Tool, Args: json.RawMessage(p.Args), Response: resp, Error: p.Error, Status: p.Status, Split: split,
			API: t.TitleOrName(), Category: Category(t), Class: p.Class, Origin: p.Origin}
		if err := pf.writeJSON(bp); err != nil {
			return err
		}
		bm := benchMessages{Messages: []message{{Role: "system", Content: simulate.SFTSystemPrompt}, {Role: "user", Content: docs.userTurn(t, args)}},
			Reference: ResponseText(p.Body, p.Error), Tool: p.Tool}
		n++
		return mf.writeJSON(bm)
	})
	if err != nil {
		pf.abort()
		mf.abort()
		return 0, err
	}
	if err := pf.close(); err != nil {
		mf.abort()
		return 0, err
	}
	return n, mf.close()
}

// atomicFile is a file written under a temporary name and renamed into
// place when complete, so an interrupted export never leaves half a file.
type atomicFile struct {
	f    *os.File
	w    *bufio.Writer
	path string
}

func newAtomicFile(path string) (*atomicFile, error) {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return nil, err
	}
	return &atomicFile{f: f, w: bufio.NewWriterSize(f, 256<<10), path: path}, nil
}

func (a *atomicFile) writeJSON(v any) error {
	b, err := toolenv.MarshalJSONNoHTML(v)
	if err != nil {
		return err
	}
	a.w.Write(b)
	return a.w.WriteByte('\n')
}

func (a *atomicFile) close() error {
	if err := a.w.Flush(); err != nil {
		a.abort()
		return err
	}
	if err := a.f.Close(); err != nil {
		os.Remove(a.path + ".tmp")
		return err
	}
	return os.Rename(a.path+".tmp", a.path)
}

func (a *atomicFile) abort() {
	a.f.Close()
	os.Remove(a.path + ".tmp")
}

// writeDatasetInfo writes LLaMA-Factory's dataset_info.json for the two
// training files.
func writeDatasetInfo(dir string) error {
	info := pyfmt.Dict{
		{Key: "mirror_openai", Value: pyfmt.Dict{
			{Key: "file_name", Value: FileTrainOpenAI},
			{Key: "formatting", Value: "sharegpt"},
			{Key: "columns", Value: pyfmt.Dict{{Key: "messages", Value: "messages"}}},
			{Key: "tags", Value: pyfmt.Dict{{Key: "role_tag", Value: "role"}, {Key: "content_tag", Value: "content"}, {Key: "user_tag", Value: "user"}, {Key: "assistant_tag", Value: "assistant"}, {Key: "system_tag", Value: "system"}}},
		}},
		{Key: "mirror_sharegpt", Value: pyfmt.Dict{
			{Key: "file_name", Value: FileTrainShareGPT},
			{Key: "formatting", Value: "sharegpt"},
			{Key: "columns", Value: pyfmt.Dict{{Key: "messages", Value: "conversations"}}},
			{Key: "tags", Value: pyfmt.Dict{{Key: "role_tag", Value: "from"}, {Key: "content_tag", Value: "value"}, {Key: "user_tag", Value: "human"}, {Key: "assistant_tag", Value: "gpt"}, {Key: "system_tag", Value: "system"}}},
		}},
	}
	out, err := indentJSON([]byte(pyfmt.Dumps(info)))
	if err != nil {
		return err
	}
	return toolenv.WriteFileAtomic(filepath.Join(dir, FileDatasetInfo), append(out, '\n'))
}
