// Package mirror is MirrorAPI's data engine: it turns the tools of any
// collection toolenv serves into a verified set of real request–response
// pairs, filters and enlarges it, explains a sample of it, splits it into
// a training set and MirrorAPI-Bench, and exports fine-tuning data — the
// half of the MirrorAPI paper ("StableToolBench-MirrorAPI: Modeling Tool
// Environments as Mirrors of 7,000+ Real-World APIs", §2.1–2.3, §4.3–4.4,
// Appendices C and D) that makes the data a simulator is trained on.
//
// The stages, each a method of Engine and each resumable:
//
//   - Generate writes requests for every API: the paper's two stages
//     through an LLM (usage scenarios at temperature 1.0, then its Calls
//     Writing prompt at 0.1), or the deterministic schema-driven sampler
//     of package mirror/sample. Requests are de-duplicated by their
//     canonical arguments.
//   - Collect calls the real API for every request through toolenv's own
//     call path (a toolenv.Handler, normally the invoke pipeline over the
//     registry), with retries, per-tool rate limits and circuit breakers,
//     and stores every answer with its provenance.
//   - Filter applies Appendix D's rules (backend/upstream's classifier),
//     keeps a bounded, API-balanced set of parameter-related failures, and
//     asks the documentation-following prompt (Table 8) when a model is
//     configured. Every dropped pair keeps its reason.
//   - Synthesize asks a model for more pairs of long-tail APIs from up to
//     10 real examples, dropping duplicates, conflicting answers and pairs
//     that fail the documentation check.
//   - Split holds out whole APIs (OOD success and failure sets) and draws
//     the in-distribution high/medium/low sets by terciles of examples per
//     API, with a fixed seed; no API and no near-duplicate request crosses
//     between training and test.
//   - Explain asks the API Simulation prompt (Table 9) for rationales of a
//     sample of training pairs, with the 2,560-token length filter and a
//     check that the rationale does not repeat the response.
//   - Export writes SFT and CoT samples with the exact Table 10/11 system
//     prompts, mixed, as OpenAI-messages and ShareGPT JSONL, the benchmark
//     splits as pairs files "toolenv eval fidelity --pairs" reads, and a
//     dataset card.
//
// Everything lives in a Store (the interface below; mirror/sqlitestore
// implements it on SQLite), and every model request goes through a
// ChatModel (an *llm.Client with record/replay), so that a run is resumed
// after an interrupt or a crash and replayed with no network.
package mirror
