#!/usr/bin/python3
"""Writes generated_predictions.jsonl, simulator predictions in the form
LLaMA-Factory writes after a predict run (json.dumps(ensure_ascii=False)
of {"prompt", "predict", "label"}, lines joined by "\\n", none after the
last), and nltk.json, what NLTK computes for them: sentence_bleu of every
line and corpus_bleu of the file, characters (list(text)) and words
(text.split()), smoothing method3 (MirrorAPI's) and method1.

Needs Debian's NLTK (apt-get install -y python3-nltk; NLTK 3.8):

    cd eval/fidelity/testdata/predictions && /usr/bin/python3 make.py
"""
import json
import random
import statistics

import nltk
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu, sentence_bleu

rng = random.Random(30)
CITIES = ["London", "Zürich", "東京", "São Paulo", "New York"]


def response(i):
    kind = i % 5
    if kind == 0:
        r = {"city": rng.choice(CITIES), "temperature": round(rng.uniform(-5, 35), 1), "unit": "C", "forecast": [{"day": d, "high": rng.randrange(10, 30)} for d in range(rng.randrange(1, 4))]}
    elif kind == 1:
        r = {"results": [{"id": rng.randrange(1000), "title": "Song %d" % rng.randrange(50), "artist": rng.choice(["Adele", "BTS", "Shakira"])} for _ in range(rng.randrange(1, 3))], "total": rng.randrange(5, 500)}
    elif kind == 2:
        r = "No results found for the given query."
    elif kind == 3:
        r = {"rate": rng.uniform(0.5, 2), "from": "EUR", "to": rng.choice(["USD", "JPY", "CHF"]), "timestamp": 1722470400 + rng.randrange(86400)}
    else:
        r = {"message": "ok", "data": {"user": {"name": rng.choice(["Ana", "李雷", "Jürgen"]), "followers": rng.randrange(10 ** 6)}}}
    return json.dumps({"error": "", "response": r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)}, ensure_ascii=False)


def predicted(label, k):
    if k == 0:
        return label
    if k == 1:  # a value changed
        return label.replace("1", "7", 1).replace("a", "e", 2)
    if k == 2:  # an error instead
        return json.dumps({"error": "Rate limit exceeded. Try again later.", "response": ""})
    if k == 3:  # cut off
        return label[: max(1, len(label) // 2)]
    if k == 4:  # laid out differently
        return json.dumps(json.loads(label), indent=2, ensure_ascii=False)
    if k == 5:
        return ""
    if k == 6:  # short
        return "{}"
    return response(rng.randrange(10))  # another answer


lines = []
for i in range(40):
    label = response(i)
    k = i % 8
    lines.append({"prompt": "API doc:\n{'name': 'api_%d'}\nRequest:\n{'q': %d}" % (i, i), "predict": predicted(label, k), "label": label})
with open("generated_predictions.jsonl", "w", encoding="utf-8") as f:
    f.write("\n".join(json.dumps(r, ensure_ascii=False) for r in lines))

sf = SmoothingFunction()
out = {"nltk": nltk.__version__, "sets": {}}
for tokens, tok in (("chars", list), ("words", str.split)):
    for method in ("method3", "method1"):
        fn = getattr(sf, method)
        per = [sentence_bleu([tok(r["label"])], tok(r["predict"]), smoothing_function=fn) for r in lines]
        corpus = corpus_bleu([[tok(r["label"])] for r in lines], [tok(r["predict"]) for r in lines], smoothing_function=fn)
        out["sets"]["%s/%s" % (tokens, method)] = {"per_line": [repr(x) for x in per], "mean_x100": repr(statistics.fmean(per) * 100), "corpus_x100": repr(corpus * 100)}
with open("nltk.json", "w") as f:
    json.dump(out, f, indent=1)
print("wrote", len(lines), "predictions; NLTK", nltk.__version__)
