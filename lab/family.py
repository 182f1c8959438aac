"""Measures what running servers do with an instruction-aware decoder embedding model (the
tiny Qwen3-Embedding), against its own library's vectors: the edge cases of that family.

Usage: python3 lab/family.py [--reference FILE] [--edges FILE] [--model NAME]
                             [--model-of LABEL=NAME ...] [--pair OLD=NEW] [--json FILE] LABEL=URL ...
  --reference  lab/reference.py's file for the model, with query_embedding (default
               fixtures/reference/qwen3-embedding-tiny.jsonl)
  --edges      another reference file of edge texts made with --ids (token ids), e.g.
               lab/reference.sh qwen3tiny --texts lab/texts/qwen3-edges.jsonl --ids --no-long
  --model      the model name to send (default: the reference file's)
  --pair       OLD=NEW (two LABELs): the migration study's query case, OLD honouring
               input_type "query", NEW perhaps not: cosine of NEW's to OLD's query vectors,
               and of NEW's vectors of the prompt sent as text to OLD's

Per server:
  texts      every text of --reference embedded alone: cosine to the library's vector, the
             lowest (with its id) and median; usage.prompt_tokens against the tokenizer; norms
  long       the reference's en-long (longer than 512 tokens): cosine and usage
  edges      every text of --edges: cosine and usage against the tokenizer
  query      input_type "query": cosine to the library's query vector (the query prompt) and
             to its bare vector; the query prompt sent as text: cosine to the query vector
  dims16     "dimensions": 16: status, length, norm, cosine to the library's first 16 values
  ids        the token ids of the tokenizer (with its appended EOS) as input, and the same ids
             (edge texts nfc-latin, nfc-ko, special-im)
             without the EOS: cosine to the text's library vector
  batch      the reference's texts in one request: lowest cosine to the same texts sent alone
Standard library only; talks to the given URLs and nothing else.
"""

import argparse
import json
import math
import os
import statistics
import sys
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else float("nan")


def norm(a):
    return math.sqrt(sum(x * x for x in a))


class Server:
    def __init__(self, label, url, model):
        self.label, self.url, self.model = label, url.rstrip("/"), model

    def post(self, **fields):
        """(status, document or error text)."""
        body = dict({"model": self.model, "encoding_format": "float"}, **fields)
        request = urllib.request.Request(self.url + "/embeddings", data=json.dumps(body).encode(),
                                         headers={"content-type": "application/json"})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(request, timeout=600) as answer:
                return answer.status, json.load(answer)
        except urllib.error.HTTPError as refused:
            return refused.code, refused.read()[:300].decode("utf-8", "replace")
        except (urllib.error.URLError, OSError) as failed:
            return None, f"no answer: {failed}"

    def embed(self, text, **fields):
        """(vector or None, prompt_tokens, status, error)."""
        status, doc = self.post(input=text, **fields)
        if status != 200 or not isinstance(doc, dict):
            return None, None, status, doc
        try:
            vector = doc["data"][0]["embedding"]
        except (KeyError, IndexError, TypeError):
            return None, None, status, str(doc)[:200]
        return vector, (doc.get("usage") or {}).get("prompt_tokens"), status, None


def short(error):
    return " ".join(str(error).split())[:140]


def per_text(server, rows, field="embedding", token_field="tokens", **fields):
    out = {}
    for row in rows:
        vector, tokens, status, error = server.embed(row["text"], **fields)
        if vector is None:
            out[row["id"]] = {"status": status, "error": short(error)}
            continue
        out[row["id"]] = {"cosine": cosine(vector, row[field]), "usage": tokens,
                          "tokens": row.get(token_field), "norm": norm(vector), "dims": len(vector)}
    return out


def summary(results):
    cos = {i: r["cosine"] for i, r in results.items() if "cosine" in r}
    if not cos:
        return "no vectors: " + "; ".join(f"{i}: {r.get('status')} {r.get('error')}" for i, r in list(results.items())[:2])
    low = min(cos, key=cos.get)
    usage_same = sum(1 for r in results.values() if "cosine" in r and r["usage"] == r["tokens"])
    norms = [r["norm"] for r in results.values() if "norm" in r]
    errors = len(results) - len(cos)
    return (f"lowest {cos[low]:.6f} ({low}), median {statistics.median(cos.values()):.6f}, "
            f"{sum(1 for c in cos.values() if c < 0.99)}/{len(cos)} < 0.99; usage = tokenizer {usage_same}/{len(cos)}; "
            f"norm {min(norms):.4f}..{max(norms):.4f}" + (f"; {errors} errors" if errors else ""))


def measure(server, header, rows, edges):
    prompt = (header.get("prompts") or {}).get("query")
    main_rows = [r for r in rows if r["id"] != "en-long"]
    long_rows = [r for r in rows if r["id"] == "en-long"]
    result = {"texts": per_text(server, main_rows)}
    result["long"] = per_text(server, long_rows)
    if edges:
        result["edges"] = per_text(server, edges)
    if prompt is not None and "query_embedding" in rows[0]:
        result["query"] = per_text(server, main_rows, field="query_embedding", token_field="query_tokens",
                                   input_type="query")
        result["query_vs_bare"] = per_text(server, main_rows, input_type="query")
        as_text = [dict(r, text=prompt + r["text"]) for r in main_rows]
        result["prompt_as_text"] = per_text(server, as_text, field="query_embedding", token_field="query_tokens")
    first = main_rows[0]
    status, doc = server.post(input=first["text"], dimensions=16)
    if status == 200 and isinstance(doc, dict):
        v = doc["data"][0]["embedding"]
        result["dims16"] = {"status": 200, "dims": len(v), "norm": norm(v),
                            "cosine_to_first16": cosine(v, first["embedding"][:16]) if len(v) == 16 else None}
    else:
        result["dims16"] = {"status": status, "error": short(doc)}
    result["ids"] = {}
    for row in edges or []:
        if "ids" not in row or row["id"] not in ("nfc-latin", "nfc-ko", "special-im"):
            continue
        ids = row["ids"]
        entry = {}
        for name, sent in (("with_eos", ids), ("without_eos", ids[:-1] if header.get("tokenizer", {}).get("appends_eos") else ids)):
            vector, tokens, status, error = server.embed(sent)
            entry[name] = ({"cosine": cosine(vector, row["embedding"]), "usage": tokens, "sent": len(sent)}
                           if vector is not None else {"status": status, "error": short(error)})
        result["ids"][row["id"]] = entry
    texts = [r["text"] for r in main_rows]
    status, doc = server.post(input=texts)
    if status == 200 and isinstance(doc, dict):
        vectors = [d["embedding"] for d in sorted(doc["data"], key=lambda d: d["index"])]
        cos = [cosine(v, r["embedding"]) for v, r in zip(vectors, main_rows)]
        result["batch"] = {"status": 200, "lowest_to_reference": min(cos), "n": len(cos)}
    else:
        result["batch"] = {"status": status, "error": short(doc)}
    return result


def print_server(label, url, r):
    print(f"\n## {label} ({url})")
    print(f"texts: {summary(r['texts'])}")
    for ident, x in r["long"].items():
        print(f"long: {ident}: " + (f"cosine {x['cosine']:.6f}, usage {x['usage']}, tokenizer {x['tokens']}"
                                    if "cosine" in x else f"{x['status']} {x['error']}"))
    if "edges" in r:
        print(f"edges: {summary(r['edges'])}")
        for ident, x in r["edges"].items():
            print(f"  {ident:<14} " + (f"cosine {x['cosine']:.6f}  usage {x['usage']}  tokenizer {x['tokens']}"
                                       if "cosine" in x else f"{x['status']} {x['error']}"))
    if "query" in r:
        print(f"query (input_type query) vs library query vectors: {summary(r['query'])}")
        print(f"query (input_type query) vs library bare vectors: {summary(r['query_vs_bare'])}")
        print(f"prompt sent as text vs library query vectors: {summary(r['prompt_as_text'])}")
    d = r["dims16"]
    if d.get("status") != 200:
        print(f"dimensions 16: {d['status']} {d['error']}")
    elif d["cosine_to_first16"] is None:
        print(f"dimensions 16: 200, {d['dims']} values (ignored), norm {d['norm']:.4f}")
    else:
        print(f"dimensions 16: 200, {d['dims']} values, norm {d['norm']:.4f}, cosine to the library's first 16 "
              f"{d['cosine_to_first16']:.6f}")
    for ident, e in r["ids"].items():
        parts = []
        for name, x in e.items():
            parts.append(f"{name} ({x.get('sent', '')} ids): " + (f"cosine {x['cosine']:.6f}, usage {x['usage']}"
                                                                   if "cosine" in x else f"{x['status']} {x['error']}"))
        print(f"token ids {ident}: " + "; ".join(parts))
    b = r["batch"]
    print("batch of all texts: " + (f"lowest cosine to the library {b['lowest_to_reference']:.6f} ({b['n']} texts)"
                                    if b.get("status") == 200 else f"{b['status']} {b['error']}"))


def pair(old, new, rows, prompt):
    rows = [r for r in rows if r["id"] != "en-long"]
    found = {"query": [], "fix": [], "bare": []}
    for row in rows:
        ov, _, _, _ = old.embed(row["text"], input_type="query")
        nv, _, _, _ = new.embed(row["text"], input_type="query")
        fv, _, _, _ = new.embed(prompt + row["text"])
        ob, _, _, _ = old.embed(row["text"])
        nb, _, _, _ = new.embed(row["text"])
        if None in (ov, nv, fv, ob, nb):
            print(f"  {row['id']}: a request failed")
            continue
        found["query"].append((row["id"], cosine(ov, nv)))
        found["fix"].append((row["id"], cosine(ov, fv)))
        found["bare"].append((row["id"], cosine(ob, nb)))
    print(f"\n## migration {old.label} -> {new.label} (input_type \"query\")")
    for key, what in (("bare", "documents (no input_type)"), ("query", "queries, input_type \"query\" on both"),
                      ("fix", "queries: prompt sent as text to the new server")):
        vals = found[key]
        if vals:
            low = min(vals, key=lambda x: x[1])
            print(f"{what}: min {low[1]:.6f} ({low[0]}), median {statistics.median(v for _, v in vals):.6f}, "
                  f"max {max(v for _, v in vals):.6f} over {len(vals)} texts")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("servers", nargs="*", metavar="LABEL=URL")
    parser.add_argument("--reference", default=os.path.join(FIXTURES, "reference", "qwen3-embedding-tiny.jsonl"))
    parser.add_argument("--edges")
    parser.add_argument("--model")
    parser.add_argument("--model-of", action="append", default=[], metavar="LABEL=NAME",
                        help="the model name to send to LABEL (e.g. a server of the no-EOS variant)")
    parser.add_argument("--pair", action="append", default=[], metavar="OLD=NEW")
    parser.add_argument("--json")
    args = parser.parse_args()

    reference = read_jsonl(args.reference)
    header, rows = reference[0], reference[1:]
    edges = read_jsonl(args.edges)[1:] if args.edges else []
    model = args.model or header["model"]
    model_of = dict(item.partition("=")[::2] for item in args.model_of)
    servers = {}
    for item in args.servers:
        label, sep, url = item.partition("=")
        if not sep or not url.startswith("http://127.0.0.1:"):
            sys.exit(f"bad server {item!r}: LABEL=http://127.0.0.1:PORT/v1")
        servers[label] = Server(label, url, model_of.get(label, model))
    print(f"reference: {header['model']} ({header.get('versions')}); {len(rows)} texts; "
          f"{len(edges)} edge texts; tokenizer {header.get('tokenizer')}; sending model {model!r}")
    everything = {}
    for label, server in servers.items():
        everything[label] = measure(server, header, rows, edges)
        print_server(label, server.url, everything[label])
    prompt = (header.get("prompts") or {}).get("query")
    for item in args.pair:
        old, _, new = item.partition("=")
        if old not in servers or new not in servers or prompt is None:
            sys.exit(f"--pair {item}: both must be given as LABEL=URL, and the reference must carry a query prompt")
        everything[f"pair {item}"] = pair(servers[old], servers[new], rows, prompt)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(everything, f, indent=1)


if __name__ == "__main__":
    main()
