# Reference values for nestful_test.go: the NESTful scorer's intent/slot
# and sequence-match computation (calculate_scores, compute_score_sklearn,
# post_process_api_with_args) over the cases in nestful_cases.json, run
# with scikit-learn. Usage: python3 nestful_ref.py nestful_cases.json
import json, sys
from sklearn.metrics import f1_score, precision_score, recall_score, accuracy_score
from sklearn.preprocessing import MultiLabelBinarizer

def score(gold, pred):
    b = MultiLabelBinarizer(); b.fit(gold)
    g, p = b.transform(gold), b.transform(pred)
    return (precision_score(g, p, average="macro", zero_division=0),
            recall_score(g, p, average="macro", zero_division=0),
            f1_score(g, p, average="macro", zero_division=0))

def fix(v):
    if type(v) == str and v.startswith("$") and not v.endswith("$"):
        v = v + "$"
    return v

def align(l1, l2):
    a1, a2 = [], []; i = j = 0
    while i < len(l1) or j < len(l2):
        if i < len(l1) and j < len(l2) and l1[i] == l2[j]:
            a1.append(l1[i]); a2.append(l2[j]); i += 1; j += 1
        elif i < len(l1):
            a1.append(l1[i]); a2.append(""); i += 1
        else:
            a1.append(""); a2.append(l2[j]); j += 1
    return a1, a2

def post(g, p):
    gn = [a.split("(", 1)[0] for a in g]; pn = [a.split("(", 1)[0] for a in p]
    if len(gn) == len(pn): return g, p
    gn, pn = align(gn, pn); g, p = list(g), list(p)
    return [("" if a == "" else g.pop(0)) for a in gn], [("" if a == "" else p.pop(0)) for a in pn]

out = {}
for case in json.load(open(sys.argv[1])):
    gi, pi, gs, ps, accs = [], [], [], [], []
    for g, p in zip(case["gold"], case["pred"]):
        gi.append([c["name"] for c in g]); pi.append([c["name"] for c in p])
        gm, pm = {}, {}
        for c in p: pm[c["name"]] = [f"{k} = {fix(v)}" for k, v in c["arguments"].items()]
        for c in g: gm[c["name"]] = [f"{k} = {v}" for k, v in c["arguments"].items()]
        for k in set(pm) | set(gm):
            ps.append(pm.get(k, [])); gs.append(gm.get(k, []))
        ga = [c["name"] + "(" + ", ".join(sorted(f"{k} = {v}" for k, v in c["arguments"].items())) + ")" for c in g]
        pa = [c["name"] + "(" + ", ".join(sorted(f"{k} = {fix(v)}" for k, v in c["arguments"].items())) + ")" for c in p]
        ga, pa = post(ga, pa)
        try: accs.append(accuracy_score(ga, pa))
        except Exception: accs.append(0.0)
    out[case["name"]] = {"intent": score(gi, pi), "slot": score(gs, ps),
                         "partial": sum(accs) / len(accs), "full": sum(a == 1 for a in accs) / len(accs)}
print(json.dumps(out, indent=1))
