#!/usr/bin/python3
"""Reference BLEU values for eval/bleu, computed by NLTK.

A test fixture generator, not run in CI: it needs Debian's python3-nltk
(apt-get install -y python3-nltk; NLTK 3.8 on Debian 12) and the shared
data folder (../shared/data beside the repository, or $TOOLENV_SHARED_DATA).

    cd eval/bleu/testdata && /usr/bin/python3 nltk_bleu.py

reads cases.json and writes nltk_bleu.json: for every case and smoothing
method, nltk.translate.bleu_score's sentence_bleu (or corpus_bleu) of the
tokenised texts. Floats are written with repr, so they read back exactly.
"""
import json
import os
import sys
import warnings

import nltk
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu, sentence_bleu

HERE = os.path.dirname(os.path.abspath(__file__))


def shared_dir():
    d = os.environ.get("TOOLENV_SHARED_DATA")
    if d:
        return d
    cur = HERE
    while True:
        cand = os.path.join(cur, "shared", "data")
        if os.path.isdir(cand):
            return cand
        parent = os.path.dirname(cur)
        if parent == cur:
            sys.exit("no shared/data folder found; set TOOLENV_SHARED_DATA")
        cur = parent


def text(spec):
    if isinstance(spec, str):
        return spec
    with open(os.path.join(shared_dir(), spec["file"]), encoding="utf-8", newline="") as f:
        raw = f.read()
    if "pointer" not in spec:
        return raw
    v = json.loads(raw)
    for part in spec["pointer"].split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        v = v[int(part)] if isinstance(v, list) else v[part]
    assert isinstance(v, str), spec
    return v


def tokenize(kind, s):
    if kind == "chars":
        return list(s)
    if kind == "words":
        return s.split()
    raise ValueError(kind)


def main():
    with open(os.path.join(HERE, "cases.json"), encoding="utf-8") as f:
        spec = json.load(f)
    sf = SmoothingFunction()
    results = []

    def score(name, kind, fn, case):
        for method in spec["smoothings"]:
            kwargs = {"smoothing_function": getattr(sf, method), "auto_reweigh": case.get("auto_reweigh", False)}
            if "weights" in case:
                kwargs["weights"] = tuple(case["weights"])
            entry = {"case": name, "kind": kind, "smoothing": method}
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    entry["bleu"] = float(fn(**kwargs))
            except Exception as e:  # NLTK's own error, recorded for the Go test
                entry["error"] = type(e).__name__
            results.append(entry)

    for case in spec["cases"] + spec.get("errors", []):
        tok = case["tokenize"]
        refs = [tokenize(tok, text(r)) for r in case["references"]]
        hyp = tokenize(tok, text(case["hypothesis"]))
        score(case["name"], "sentence", lambda **kw: sentence_bleu(refs, hyp, **kw), case)
    for corpus in spec.get("corpora", []):
        tok = corpus["tokenize"]
        refs = [[tokenize(tok, text(r)) for r in p["references"]] for p in corpus["pairs"]]
        hyps = [tokenize(tok, text(p["hypothesis"])) for p in corpus["pairs"]]
        score(corpus["name"], "corpus", lambda **kw: corpus_bleu(refs, hyps, **kw), corpus)

    out = {
        "generator": "eval/bleu/testdata/nltk_bleu.py",
        "nltk": nltk.__version__,
        "python": sys.version.split()[0],
        "results": results,
    }
    # One result per line, so that a change reads well in a diff.
    head = json.dumps({k: v for k, v in out.items() if k != "results"}, ensure_ascii=False)[:-1]
    lines = ",\n".join(json.dumps(r, ensure_ascii=False) for r in results)
    with open(os.path.join(HERE, "nltk_bleu.json"), "w", encoding="utf-8") as f:
        f.write(head + ', "results": [\n' + lines + "\n]}\n")
    print("wrote %d values with NLTK %s" % (len(results), nltk.__version__))


if __name__ == "__main__":
    main()
