"""The Solvable Pass Rate as StableToolBench's eval_pass_rate.py computes it.

Written for toolenv's tests; it follows the scoring loop at the end of
toolbench/tooleval/eval_pass_rate.py in THUNLP-MT/StableToolBench (commit
45b9007137ed8d60ebd15ec820a7902770de2b75): each query's is_solved keys go
through int(), a round scores 1 for exactly "AnswerStatus.Solved" and 0.5 for
exactly "AnswerStatus.Unsure", each round's score is divided by the number of
queries, and the result is the mean of the rounds and their population
standard deviation (numpy.std), times 100.

usage: python3 sopr_reference.py < JOBS.json
JOBS.json is a list of {"path": RESULTS.json, "times": EVALUATE_TIMES}; it
prints a list with, for each, {"mean": ..., "std": ..., "per_round": [...]}
or {"error": "..."} where eval_pass_rate.py would stop.
"""
import json
import math
import sys


def score(path, times):
    try:
        with open(path) as f:
            label_cnt = json.load(f)
        scores = []
        for runtime in range(times):
            total = 0
            for query_id in label_cnt:
                rounds = {int(k): v for k, v in label_cnt[query_id]["is_solved"].items()}
                if runtime not in rounds:
                    continue
                if rounds[runtime] == "AnswerStatus.Solved":
                    total += 1
                elif rounds[runtime] == "AnswerStatus.Unsure":
                    total += 0.5
            scores.append(total / len(label_cnt))
        mean = sum(scores) / len(scores)
        std = math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))
        return {"mean": mean * 100, "std": std * 100, "per_round": scores}
    except Exception as e:  # what would stop eval_pass_rate.py
        return {"error": "%s: %s" % (type(e).__name__, e)}


print(json.dumps([score(job["path"], job["times"]) for job in json.load(sys.stdin)]))
