"""Measures what a running rerank server does, with real requests (standard library only), and
compares its scores with a reference file of the model's own library (lab/rerank_reference.py).

Usage: python3 lab/rerank/probe.py BASE_URL --reference fixtures/reference/tiny-rerank-bert.jsonl
           [--model NAME] [--path /v1/rerank] [--key-env VAR] [--json OUT.json]
  BASE_URL is the server's root (http://127.0.0.1:PORT), without /v1.
  --path: the rerank route to use (default: the first of /v1/rerank, /rerank, /v2/rerank that
  answers the plain request with 200).

Prints one line per probe (status, what came back, the numbers) and, with --json, writes every
request and an excerpt of every answer. Nothing here judges: it records.
"""

import argparse
import json
import math
import os
import sys
import time
import urllib.error
import urllib.request

ROUTES = ["/v1/rerank", "/rerank", "/v2/rerank", "/v1/v1/rerank", "/v1/v2/rerank", "/reranking", "/v1/reranking",
          "/score", "/v1/score", "/v1/ranking"]


class Server:
    def __init__(self, base, key=None, timeout=600):
        self.base = base.rstrip("/")
        self.key = key
        self.timeout = timeout
        self.log = []

    def post(self, path, body, raw=None):
        data = raw if raw is not None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method="POST")
        req.add_header("Content-Type", "application/json")
        if self.key:
            req.add_header("Authorization", "Bearer " + self.key)
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                status, text = r.status, r.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode("utf-8", "replace")
        except Exception as e:  # connection reset, timeout
            status, text = None, f"{type(e).__name__}: {e}"
        dt = time.monotonic() - t0
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        self.log.append({"path": path, "request": body if raw is None else raw.decode("utf-8", "replace"),
                         "status": status, "seconds": round(dt, 3), "body": text[:2000]})
        return status, parsed, text, dt


def items_of(parsed):
    """(list of result items, shape name) for the shapes real servers use."""
    if isinstance(parsed, list):
        return parsed, "bare-array"
    if isinstance(parsed, dict):
        for key in ("results", "data", "rankings"):
            if isinstance(parsed.get(key), list):
                return parsed[key], key
    return None, None


def score_of(item):
    for key in ("relevance_score", "score", "logit"):
        if isinstance(item, dict) and isinstance(item.get(key), (int, float)):
            return float(item[key])
    return None


def scores_by_index(parsed, n):
    items, _ = items_of(parsed)
    if items is None:
        return None, None
    out = [None] * n
    order = []
    for pos, it in enumerate(items):
        idx = it.get("index", pos) if isinstance(it, dict) else pos
        s = score_of(it)
        if isinstance(idx, int) and 0 <= idx < n:
            out[idx] = s
        order.append(idx)
    return out, order


def sigmoid(x):
    return 1 / (1 + math.exp(-x))


def excerpt(text, n=200):
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n] + "..."


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base")
    ap.add_argument("--reference", required=True)
    ap.add_argument("--model")
    ap.add_argument("--path")
    ap.add_argument("--key-env")
    ap.add_argument("--json")
    ap.add_argument("--skip-many", action="store_true", help="leave out the 1000-document case")
    args = ap.parse_args()

    with open(args.reference, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    header, cases = lines[0], {c["id"]: c for c in lines[1:]}
    model = args.model or header["model"]
    srv = Server(args.base, os.environ.get(args.key_env) if args.key_env else None)
    report = {"base": args.base, "model": model, "reference": header, "probes": {}}

    def record(name, **kw):
        report["probes"][name] = kw
        print(f"{name:28s} " + "; ".join(f"{k}={v}" for k, v in kw.items()))

    basic = cases["en-basic"]
    plain = {"model": model, "query": basic["query"], "documents": basic["documents"]}

    # Routes
    routes = {}
    for r in ROUTES:
        st, parsed, text, _ = srv.post(r, plain)
        routes[r] = st
    record("routes", **{r: routes[r] for r in ROUTES})
    path = args.path or next((r for r in ["/v1/rerank", "/rerank", "/v2/rerank"] if routes[r] == 200), None)
    if path is None:
        print("no rerank route answered 200", file=sys.stderr)
        srv.post("/v1/rerank", plain)
        record("no-route", body=excerpt(srv.log[-1]["body"]))
        write(args.json, report, srv)
        return 1
    report["path"] = path

    def send(body, name=None):
        return srv.post(path, body)

    # Shape of the plain answer
    st, parsed, text, _ = send(plain)
    items, shape = items_of(parsed)
    top_keys = sorted(parsed.keys()) if isinstance(parsed, dict) else "array"
    item_keys = sorted(items[0].keys()) if items and isinstance(items[0], dict) else None
    record("shape", status=st, top=top_keys, items=shape, item_keys=item_keys,
           model_echo=parsed.get("model") if isinstance(parsed, dict) else None,
           usage=parsed.get("usage") if isinstance(parsed, dict) else None,
           meta=parsed.get("meta") if isinstance(parsed, dict) else None,
           document_example=items[0].get("document", "(absent)") if item_keys else None)

    # Scores against the reference: each case alone, all documents, no top_n.
    worst_raw = worst_act = 0.0
    per_case = {}
    for cid, case in cases.items():
        if args.skip_many and cid == "many-1000":
            continue
        n = len(case["documents"])
        st, parsed, text, dt = send({"model": model, "query": case["query"], "documents": case["documents"]})
        got, order = scores_by_index(parsed, n) if st == 200 else (None, None)
        entry = {"status": st, "seconds": round(dt, 2)}
        if got is None or any(g is None for g in got):
            entry["body"] = excerpt(text)
            if got is not None:
                entry["missing"] = sum(g is None for g in got)
        else:
            d_raw = max(abs(g - r) for g, r in zip(got, case["raw"]))
            d_act = max(abs(g - r) for g, r in zip(got, case["scores"]))
            entry.update(max_diff_raw=float(f"{d_raw:.3g}"), max_diff_sigmoid=float(f"{d_act:.3g}"),
                         returned=len(order), sorted=all(got[order[i]] >= got[order[i + 1]] for i in range(len(order) - 1)),
                         order=order if n <= 12 else order[:8], ref_order=case["ranking"] if n <= 12 else case["ranking"][:8])
            if cid in ("empty-document", "whitespace-document", "empty-query", "long-document-under",
                       "long-document-over", "long-query", "long-query-under", "long-both", "duplicate-documents", "tei-ties",
                       "ko", "ja", "mixed-scripts"):
                entry["scores"] = [round(g, 4) for g in got]
                entry["ref_raw"] = [round(x, 4) for x in case["raw"]]
                entry["ref_sigmoid"] = [round(x, 4) for x in case["scores"]]
            if isinstance(parsed, dict) and parsed.get("usage"):
                entry["usage"] = parsed["usage"]
                entry["ref_tokens"] = sum(case["tokens"])
            worst_raw = max(worst_raw, d_raw) if cid not in ("ko",) else worst_raw
            worst_act = max(worst_act, d_act) if cid not in ("ko",) else worst_act
        per_case[cid] = entry
        record("case:" + cid, **entry)
    record("scores-overall", max_diff_raw_excluding_ko=float(f"{worst_raw:.3g}"),
           max_diff_sigmoid_excluding_ko=float(f"{worst_act:.3g}"))

    # Long documents one by one (which lengths pass)
    for cid in ("long-document-under", "long-document-over"):
        case = cases[cid]
        for i, d in enumerate(case["documents"][:3]):
            st, parsed, text, _ = send({"model": model, "query": case["query"], "documents": [d]})
            got, _ = scores_by_index(parsed, 1) if st == 200 else (None, None)
            s = got[0] if got else None
            record(f"alone:{cid}[{i}]", tokens_untruncated=case["tokens_untruncated"][i], status=st,
                   score=None if s is None else round(s, 4), ref_raw=round(case["raw"][i], 4),
                   ref_sigmoid=round(case["scores"][i], 4), body=None if st == 200 else excerpt(text))

    # Repeat
    a = scores_by_index(send(plain)[1], 5)[0]
    b = scores_by_index(send(plain)[1], 5)[0]
    record("repeat", identical=a == b, max_diff=None if not a or not b or None in a or None in b else
           max(abs(x - y) for x, y in zip(a, b)))

    # top_n / top_k
    n = len(basic["documents"])
    for label, extra in [("top_n=2", {"top_n": 2}), ("top_n=0", {"top_n": 0}), ("top_n=N+5", {"top_n": n + 5}),
                         ("top_n=null", {"top_n": None}), ("top_n=-1", {"top_n": -1}), ("top_n='2'", {"top_n": "2"}),
                         ("top_k=2", {"top_k": 2}), ("top_n=2,top_k=3", {"top_n": 2, "top_k": 3})]:
        st, parsed, text, _ = send(dict(plain, **extra))
        items, _ = items_of(parsed) if st == 200 else (None, None)
        record(label, status=st, returned=None if items is None else len(items),
               indices=None if items is None else [it.get("index") for it in items],
               body=None if st == 200 else excerpt(text))

    # return_documents
    for label, extra in [("return_documents=true", {"return_documents": True}),
                         ("return_documents=false", {"return_documents": False}),
                         ("return_documents=null", {"return_documents": None}),
                         ("return_text=true", {"return_text": True})]:
        st, parsed, text, _ = send(dict(plain, **extra))
        items, _ = items_of(parsed) if st == 200 else (None, None)
        if items:
            it = items[0]
            docs = {k: it[k] for k in ("document", "text") if k in it}
            record(label, status=st, item_keys=sorted(it.keys()), document=docs or "(absent)",
                   equals_input=any(v == basic["documents"][it["index"]] or v == {"text": basic["documents"][it["index"]]}
                                    for v in docs.values()))
        else:
            record(label, status=st, body=excerpt(text))

    # Request shapes
    shapes = [
        ("TEI texts", {"query": basic["query"], "texts": basic["documents"]}),
        ("TEI texts+return_text", {"query": basic["query"], "texts": basic["documents"], "return_text": True}),
        ("documents as {text}", dict(plain, documents=[{"text": d} for d in basic["documents"]])),
        ("no model", {"query": basic["query"], "documents": basic["documents"]}),
        ("model null", dict(plain, model=None)),
        ("model unknown", dict(plain, model="no-such/model")),
        ("empty documents", dict(plain, documents=[])),
        ("documents missing", {"model": model, "query": basic["query"]}),
        ("query missing", {"model": model, "documents": basic["documents"]}),
        ("documents a string", dict(plain, documents="Paris is the capital of France.")),
        ("documents [1,2]", dict(plain, documents=[1, 2])),
        ("documents [null]", dict(plain, documents=[None])),
        ("query a list", dict(plain, query=["a", "b"])),
        ("raw_scores=true", dict(plain, raw_scores=True)),
        ("use_activation=false", dict(plain, use_activation=False)),
        ("truncate_prompt_tokens=512 (long)", {"model": model, "query": basic["query"],
                                                "documents": cases["long-document-over"]["documents"],
                                                "truncate_prompt_tokens": 512}),
        ("truncate_prompt_tokens=-1 (long)", {"model": model, "query": basic["query"],
                                               "documents": cases["long-document-over"]["documents"],
                                               "truncate_prompt_tokens": -1}),
        ("max_tokens_per_doc=64", dict(plain, max_tokens_per_doc=64)),
        ("long query, truncate_prompt_tokens=512", {"model": model, "query": cases["long-query"]["query"],
                                                    "documents": cases["long-query"]["documents"],
                                                    "truncate_prompt_tokens": 512}),
        ("empty query, empty document", {"model": model, "query": "", "documents": [""]}),
    ]
    for label, body in shapes:
        st, parsed, text, _ = send(body)
        items, shape = items_of(parsed) if st == 200 else (None, None)
        entry = {"status": st}
        if items is not None:
            got, order = scores_by_index(parsed, len(body.get("documents") or body.get("texts") or []) or 1)
            entry.update(shape=shape, returned=len(items), item_keys=sorted(items[0].keys()) if items else None)
            ref = None
            if label in ("raw_scores=true", "use_activation=false", "TEI texts", "no model", "model unknown",
                         "model null", "documents as {text}", "max_tokens_per_doc=64"):
                ref = basic
            if label.startswith("truncate_prompt_tokens"):
                ref = cases["long-document-over"]
            if label.startswith("long query"):
                ref = cases["long-query"]
            if ref and got and None not in got and len(got) == len(ref["raw"]):
                entry["max_diff_raw"] = float(f"{max(abs(g - r) for g, r in zip(got, ref['raw'])):.3g}")
                entry["max_diff_sigmoid"] = float(f"{max(abs(g - r) for g, r in zip(got, ref['scores'])):.3g}")
            if isinstance(parsed, dict) and "model" in parsed:
                entry["model_echo"] = parsed["model"]
            if label.startswith("empty query") and got:
                entry["scores"] = got
            if label.startswith("TEI texts+"):
                entry["first_item"] = items[0] if items else None
        else:
            entry["body"] = excerpt(text, 300)
        record("shape:" + label, **entry)

    # vLLM's /score (input order, data[].score) where it exists
    for r in ("/score", "/v1/score"):
        if routes.get(r) not in (None, 404):
            st, parsed, text, _ = srv.post(r, {"model": model, "queries": basic["query"], "documents": basic["documents"]})
            got, order = scores_by_index(parsed, len(basic["documents"])) if st == 200 else (None, None)
            entry = {"status": st}
            if got and None not in got:
                entry.update(shape=items_of(parsed)[1], order=order,
                             max_diff_sigmoid=float(f"{max(abs(g - x) for g, x in zip(got, basic['scores'])):.3g}"))
            else:
                entry["body"] = excerpt(text)
            record(r + " queries/documents", **entry)

    # Malformed JSON and wrong method
    st, parsed, text, _ = srv.post(path, None, raw=b'{"query": "q", "documents": ["a"')
    record("malformed json", status=st, body=excerpt(text))
    req = urllib.request.Request(srv.base + path, method="GET")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            st, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        st, text = e.code, e.read().decode("utf-8", "replace")
    record("GET on route", status=st, body=excerpt(text))

    write(args.json, report, srv)
    return 0


def write(path, report, srv):
    if path:
        report["exchanges"] = srv.log
        with open(path, "w", encoding="utf-8") as f:
            json.dump(report, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    sys.exit(main())
