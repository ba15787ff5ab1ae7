#!/usr/bin/env python3
"""Writes cases.json (generated NESTful samples whose predictions are written
the ways models write them) and reference.json (what IBM NESTful's own
calculate_scores returns for them with each output parser its scorer.py
picks by model).

    python3 reference.py --nestful-src PATH/TO/NESTFUL/src

PATH/TO/NESTFUL/src is IBM NESTful's src folder (scorer.py, utils.py,
output_parsers.py), run unchanged; scikit-learn comes from Debian
(scripts/install-nestful-reference.sh). pandas, tqdm and jsonlines, which
the numbers do not use, are stubbed when they are not installed. The
figures are taken at full precision where calculate_scores computes them
(compute_score_sklearn's return values, accuracy_score per sample) and as
the three-place strings it returns.
"""
import argparse
import json
import random
import statistics
import sys
import types
import warnings

PARSERS = {  # toolenv's name: a model of scorer.py's table that selects the parser
    "granite": "granite-3.1-8b-instruct",  # parse_granite_3_1_output
    "llama": "Llama-3.1-8B-Instruct",  # parse_llama_3_output
    "hammer": "Hammer2.0-7b",  # parse_Hammer2_0_7b
    "agent": "xLAM-7b-fc-r",  # parse_xLAM_1b_fc_r
}

APIS = ["SkyScrapperSearchAirport", "TripadvisorSearchHotels", "divide", "multiply", "add",
        "get_weather", "search_recipes", "convert_currency", "sort_list", "lookup"]
WORDS = ["New York", "London", "x", "2024-08-15", "vegan", "EUR", "Zürich", "a b", "", "$notref"]


def value(rng, depth=0):
    k = rng.randrange(8 if depth == 0 else 5)
    if k == 0:
        return rng.randrange(-5, 100)
    if k == 1:
        return rng.choice([0.5, 7.0, 1e-3, 2.25])
    if k in (2, 3):
        return rng.choice(WORDS)
    if k == 4:
        return rng.choice([True, False, None])
    if k == 5:
        return [value(rng, 1) for _ in range(rng.randrange(3))]
    return {rng.choice(["b", "a", "c"]): value(rng, 1) for _ in range(rng.randrange(1, 3))}


def gold_sequence(rng):
    calls = []
    for i in range(rng.randrange(1, 5)):
        args = {}
        for j in range(rng.randrange(1, 4)):
            if calls and rng.random() < 0.3:
                args["arg_%d" % j] = "$var%d.result$" % rng.randrange(1, i + 1)
            else:
                args["arg_%d" % j] = value(rng)
        calls.append({"name": rng.choice(APIS), "arguments": args, "label": "$var%d" % (i + 1)})
    return calls


def mutate(rng, calls):
    m = json.loads(json.dumps(calls))
    k = rng.randrange(7)
    if k == 1 and len(m) > 1:
        del m[rng.randrange(len(m))]
    elif k == 2 and len(m) > 1:
        i, j = rng.sample(range(len(m)), 2)
        m[i], m[j] = m[j], m[i]
    elif k == 3:
        c = rng.choice(m)
        c["arguments"][rng.choice(list(c["arguments"]))] = value(rng)
    elif k == 4:  # other labels, references following them
        for c in m:
            c["label"] = c["label"].replace("var", "var_")
            for a, v in c["arguments"].items():
                if isinstance(v, str) and v.startswith("$var"):
                    c["arguments"][a] = v.replace("$var", "$var_")
    elif k == 5:  # labels removed
        for c in m:
            del c["label"]
    elif k == 6:  # a var_result call appended
        m.append({"name": "var_result", "arguments": {"var": "$var%d.result$" % len(m)}})
    return m


def written(rng, m):
    d = json.dumps(m)
    styles = [
        lambda: d,
        lambda: "```json\n" + d + "\n```",
        lambda: "```\n" + d + "\n```",
        lambda: "<tool_call>" + d,
        lambda: "".join("<tool_call>" + json.dumps(c) + "</tool_call>\n" for c in m),
        lambda: ", ".join(json.dumps(c) for c in m),
        lambda: d + "'",
        lambda: json.dumps({"tool_calls": m}),
        lambda: "[BEGIN OF FUNCTION CALLS]\n" + json.dumps({"tool_calls": m}),
        lambda: "[]",
        lambda: json.dumps({"tool_calls": []}),
        lambda: "Here are the calls: " + d,
        lambda: "<think>\nfirst the airport\n</think>\n\n" + d,
        lambda: rng.choice(["7", "null", "true", "\"text\""]),
        lambda: json.dumps(m[0]) if m else "{}",
        lambda: "\n\x1c " + d + " \n",
        lambda: json.dumps(m, indent=2),
    ]
    i = rng.randrange(len(styles))
    return i, styles[i]()


def make_cases(seed, sets, per_set):
    rng = random.Random(seed)
    out = []
    for s in range(sets):
        samples = []
        for k in range(per_set):
            g = gold_sequence(rng)
            style, pred = written(rng, mutate(rng, g))
            samples.append({"id": "s%d:%d:style%d" % (s, k, style), "gold": json.dumps(g), "pred": pred})
        out.append({"name": "generated/%d" % s, "samples": samples})
    return out


def stub(name, **attrs):
    try:
        __import__(name)
    except ImportError:
        m = types.ModuleType(name)
        for k, v in attrs.items():
            setattr(m, k, v)
        sys.modules[name] = m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nestful-src", required=True)
    ap.add_argument("--seed", type=int, default=30)
    ap.add_argument("--sets", type=int, default=12)
    ap.add_argument("--per-set", type=int, default=24)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    stub("pandas", DataFrame=types.SimpleNamespace(from_dict=lambda d: d))
    stub("jsonlines")
    sys.modules["tqdm"] = types.SimpleNamespace(tqdm=lambda x: x)  # no progress bars
    sys.path.insert(0, args.nestful_src)
    import scorer  # IBM NESTful src/scorer.py

    captured = {}
    real_sklearn = scorer.compute_score_sklearn
    real_acc = scorer.accuracy_score

    def sklearn(gold, pred):
        r = real_sklearn(gold, pred)
        captured.setdefault("prf", []).append(list(r))
        return r

    def acc(gold, pred):
        try:
            r = real_acc(gold, pred)
        except Exception:
            captured.setdefault("acc", []).append(0.0)
            raise
        captured.setdefault("acc", []).append(float(r))
        return r

    scorer.compute_score_sklearn = sklearn
    scorer.accuracy_score = acc

    def score(samples, model):
        captured.clear()
        items = [{"sample_id": s["id"], "output": s["gold"], "generated_text": s["pred"]} for s in samples]
        try:
            res, _ = scorer.calculate_scores(items, model, None, win_rate_flag=False)
        except (ValueError, TypeError) as e:
            return {"error": type(e).__name__ + ": " + str(e)}
        per = captured["acc"]
        return {
            "intent": captured["prf"][0], "slot": captured["prf"][1],
            "partial": statistics.mean(per), "full": sum(1 for a in per if a == 1) / len(per),
            "per_sample_acc": per, "parse_errors": res["num_pred_examples_w_parsing_errors"],
            "rounded": {k: res[k] for k in ["p_intent", "r_intent", "f1_intent", "p_slot", "r_slot", "f1_slot", "accuracy_combined", "percentage_times_full_score"]},
        }

    sets = make_cases(args.seed, args.sets, args.per_set)
    ref = {}
    for parser, model in PARSERS.items():
        ref[parser] = {}
        for s in sets:
            ref[parser][s["name"]] = {
                "aggregate": score(s["samples"], model),
                "per": {x["id"]: score([x], model) for x in s["samples"]},
            }
    with open("cases.json", "w") as f:
        json.dump({"seed": args.seed, "sets": sets}, f, indent=1)
    with open("reference.json", "w") as f:
        json.dump({"parsers": {p: "scorer.py model %s" % m for p, m in PARSERS.items()}, "sets": ref}, f, indent=1)


if __name__ == "__main__":
    main()
