#!/usr/bin/env python3
"""SoWR as StableToolBench's eval_preference.py computes it, on recorded
judge verdicts.

The loop below is the body of eval_preference.py's __main__ for one test
set (THUNLP-MT/StableToolBench, toolbench/tooleval/eval_preference.py at
commit 45b9007137ed8d60ebd15ec820a7902770de2b75), copied with its file
reading replaced by the case's fields and its evaluator by the recorded
verdicts (get_preference returns the verdict recorded for the query and
round). It writes cases.json (generated test sets: queries missing from
either model's answers, pass-rate labels that decide a query, prior save
files with complete and incomplete rounds, ties) and reference.json (the
save file's counts and the printed rates).

    cd eval/stb/testdata/preference && python3 reference.py
"""
import json
import random
from concurrent.futures import ThreadPoolExecutor, as_completed


def run(case):
    reference_model, output_model = "ref_model", "out_model"
    test_ids = case["test_ids"]
    reference_examples = {q: {} for q in case["has_ref"]}
    output_examples = {q: {} for q in case["has_output"]}
    ref_pass_result_dict = {q: {"machine_label": l} for q, l in case["ref_pass"].items()}
    output_pass_result_dict = {q: {"machine_label": l} for q, l in case["output_pass"].items()}
    verdicts = case["verdicts"]
    prefer_dict = json.loads(json.dumps(case["prior"])) if case["prior"] is not None else {}
    calls = []

    class args:
        evaluate_times = case["rounds"]
        max_eval_threads = 3
        use_pass_rate = "false"

    def get_preference(query_id, task_status, answer_statuss, ref_example, output_example):
        calls.append(query_id)
        return query_id, verdicts[query_id][int(round_of[query_id])]

    round_of = {}
    for i in range(int(args.evaluate_times)):
        for qid in test_ids:
            if qid not in prefer_dict:
                prefer_dict[qid] = {reference_model: 0, output_model: 0, f"round_{i}": "incomplete"}
            elif f"round_{i}" not in prefer_dict[qid]:
                prefer_dict[qid][f"round_{i}"] = "incomplete"
    for i in range(int(args.evaluate_times)):
        with ThreadPoolExecutor(args.max_eval_threads) as pool:
            future = []
            for qid in test_ids:
                if qid not in prefer_dict:
                    prefer_dict[qid] = {reference_model: 0, output_model: 0, f"round_{i}": "incomplete"}
                elif prefer_dict[qid][f"round_{i}"] == "complete":
                    continue
                if qid in ref_pass_result_dict and qid in output_pass_result_dict:
                    if ref_pass_result_dict[qid]["machine_label"] == "passed" and output_pass_result_dict[qid]["machine_label"] == "failed":
                        prefer_dict[qid][reference_model] += 1
                        continue
                    elif ref_pass_result_dict[qid]["machine_label"] == "failed" and output_pass_result_dict[qid]["machine_label"] == "passed":
                        prefer_dict[qid][output_model] += 1
                        continue
                if qid not in reference_examples:
                    prefer_dict[qid][output_model] += 1
                    continue
                if qid not in output_examples:
                    prefer_dict[qid][reference_model] += 1
                    continue

                ref_example = reference_examples[qid]
                output_example = output_examples[qid]
                task_status = None
                answer_statuss = [None, None]

                round_of[qid] = i
                if i % 2 == 0 or i >= 0:
                    future.append(pool.submit(get_preference, qid, task_status, answer_statuss, ref_example, output_example))
            for thd in as_completed(future):
                qid, preference = thd.result()
                if i % 2 == 0 or i >= 0:
                    if preference == "ref":
                        prefer_dict[qid][reference_model] += 1
                    elif preference == "output":
                        prefer_dict[qid][output_model] += 1
                    prefer_dict[qid][f"round_{i}"] = "complete"

    win_rate, lose_rate, tie_rate = 0, 0, 0
    for query_id in prefer_dict:
        if prefer_dict[query_id][reference_model] > prefer_dict[query_id][output_model]:
            lose_rate += 1
        elif prefer_dict[query_id][reference_model] < prefer_dict[query_id][output_model]:
            win_rate += 1
        else:
            tie_rate += 1
    win_rate /= len(prefer_dict)
    lose_rate /= len(prefer_dict)
    tie_rate /= len(prefer_dict)
    line = f"Test set: {case['name']}. Reference model: {reference_model}, Candidate model: {output_model}. Win rate: {str(win_rate)}, Tie rate: {str(tie_rate)}"
    return {"prefer_dict": prefer_dict, "win": win_rate, "lose": lose_rate, "tie": tie_rate, "printed": line, "judged": len(calls)}


def make(seed, n):
    rng = random.Random(seed)
    cases = []
    for k in range(n):
        ids = ["q%d" % j for j in range(rng.randrange(1, 30))]
        rounds = rng.choice([1, 2, 2, 3])
        case = {
            "name": "G%d_set%d" % (1 + k % 3, k),
            "test_ids": ids,
            "has_ref": [q for q in ids if rng.random() > 0.1],
            "has_output": [q for q in ids if rng.random() > 0.1],
            "ref_pass": {q: rng.choice(["passed", "failed", "unsure"]) for q in ids if rng.random() < 0.4},
            "output_pass": {q: rng.choice(["passed", "failed", "unsure"]) for q in ids if rng.random() < 0.4},
            "rounds": rounds,
            "verdicts": {q: [rng.choice(["ref", "output", "equal"]) for _ in range(rounds)] for q in ids},
            "prior": None,
        }
        if rng.random() < 0.4:
            prior = {}
            for q in ids + ["old%d" % j for j in range(rng.randrange(3))]:
                if rng.random() < 0.6:
                    e = {"ref_model": rng.randrange(3), "out_model": rng.randrange(3)}
                    for i in range(rounds):
                        if rng.random() < 0.7:
                            e["round_%d" % i] = rng.choice(["complete", "incomplete"])
                    prior[q] = e
            case["prior"] = prior
        cases.append(case)
    return cases


if __name__ == "__main__":
    cases = make(30, 60)
    with open("cases.json", "w") as f:
        json.dump(cases, f, indent=1)
    with open("reference.json", "w") as f:
        json.dump([run(c) for c in cases], f, indent=1)
