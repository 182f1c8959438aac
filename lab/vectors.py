"""Compares running servers' vectors with the model's own library, and checks that they
still tell a paraphrase from an unrelated sentence.

Usage: python3 lab/vectors.py [--reference FILE] [--triples FILE] [--model NAME]
                              [--key-env LABEL=VAR ...] [--json FILE] LABEL=URL ...
  URL is a base URL such as http://127.0.0.1:18002/v1; LABEL names the server in the output.
  --key-env LABEL=VAR sends "Authorization: Bearer $VAR" to LABEL (e.g. LiteLLM's key).

(a) Every text of the reference file (lab/reference.py's output) is embedded alone
    ({"model", "input": TEXT, "encoding_format": "float"}) and compared with the library's
    vector: lowest and median cosine, the texts below 0.99, and whether usage.prompt_tokens
    equals the reference's token count (the model's tokenizer with special tokens).
(b) Every triple of the triples file (anchor, paraphrase, unrelated) is embedded and
    cos(anchor, paraphrase), cos(anchor, unrelated) and their difference (the margin) printed;
    per server the lowest and median margin and how many triples have a margin <= 0.05 and
    <= 0.0.
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


class Server:
    def __init__(self, label, url, model, key=None):
        self.label, self.url, self.model, self.key = label, url.rstrip("/"), model, key

    def embed(self, text):
        """(vector, prompt_tokens) or (error string, None)."""
        body = json.dumps({"model": self.model, "input": text, "encoding_format": "float"}).encode()
        headers = {"content-type": "application/json"}
        if self.key:
            headers["authorization"] = "Bearer " + self.key
        request = urllib.request.Request(self.url + "/embeddings", data=body, headers=headers)
        # Loopback only: no proxy, whatever the environment says.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(request, timeout=300) as answer:
                doc = json.load(answer)
        except urllib.error.HTTPError as refused:
            return f"HTTP {refused.code}: {refused.read()[:200]!r}", None
        except (urllib.error.URLError, OSError) as failed:
            return f"no answer: {failed}", None
        try:
            vector = doc["data"][0]["embedding"]
        except (KeyError, IndexError, TypeError):
            return f"no embedding in {str(doc)[:200]}", None
        if not isinstance(vector, list):
            return f"embedding is a {type(vector).__name__}, not a float list", None
        usage = doc.get("usage") or {}
        return vector, usage.get("prompt_tokens")


def against_reference(server, header, rows):
    result = {"cosines": {}, "errors": {}, "usage": {}, "norms": []}
    for row in rows:
        vector, tokens = server.embed(row["text"])
        if not isinstance(vector, list):
            result["errors"][row["id"]] = vector
            continue
        if len(vector) != len(row["embedding"]):
            result["errors"][row["id"]] = f"{len(vector)} dimensions, reference {len(row['embedding'])}"
            continue
        result["cosines"][row["id"]] = cosine(vector, row["embedding"])
        result["norms"].append(math.sqrt(sum(x * x for x in vector)))
        result["usage"][row["id"]] = (tokens, row["tokens"])
    return result


def on_triples(server, triples):
    result = {"triples": {}, "errors": {}}
    for t in triples:
        vectors = {}
        for part in ("anchor", "paraphrase", "unrelated"):
            vector, _ = server.embed(t[part])
            if not isinstance(vector, list):
                result["errors"][t["id"]] = f"{part}: {vector}"
                break
            vectors[part] = vector
        else:
            ap = cosine(vectors["anchor"], vectors["paraphrase"])
            au = cosine(vectors["anchor"], vectors["unrelated"])
            result["triples"][t["id"]] = {"paraphrase": ap, "unrelated": au, "margin": ap - au}
    return result


def usage_summary(usage):
    if not usage:
        return "-", []
    same = [i for i, (got, want) in usage.items() if got == want]
    missing = [i for i, (got, _) in usage.items() if got is None]
    if len(missing) == len(usage):
        return "no usage.prompt_tokens", []
    differ = [(i, got, want) for i, (got, want) in usage.items() if got != want]
    return f"{len(same)}/{len(usage)} equal", differ


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("servers", nargs="+", metavar="LABEL=URL")
    parser.add_argument("--reference", default=os.path.join(FIXTURES, "reference", "all-MiniLM-L6-v2.jsonl"))
    parser.add_argument("--triples", default=os.path.join(FIXTURES, "semantic-triples.jsonl"))
    parser.add_argument("--model", help="the model name to send (default: the reference file's)")
    parser.add_argument("--key-env", action="append", default=[], metavar="LABEL=VAR")
    parser.add_argument("--json", help="also write every number to this file")
    args = parser.parse_args()

    reference = read_jsonl(args.reference)
    header, rows = reference[0], reference[1:]
    triples = read_jsonl(args.triples)
    model = args.model or header["model"]
    keys = {}
    for item in args.key_env:
        label, _, var = item.partition("=")
        keys[label] = os.environ.get(var) or sys.exit(f"{var} is not set (for {label})")
    servers = []
    for item in args.servers:
        label, sep, url = item.partition("=")
        if not sep or not url.startswith("http://127.0.0.1:"):
            sys.exit(f"bad server {item!r}: LABEL=http://127.0.0.1:PORT/v1")
        servers.append(Server(label, url, model, keys.get(label)))

    versions = ", ".join(f"{k} {v}" for k, v in header.get("versions", {}).items())
    print(f"reference: {header['model']} by {header['library']} ({versions}); {len(rows)} texts; "
          f"{len(triples)} triples")
    everything = {}
    for server in servers:
        ref = against_reference(server, header, rows)
        tri = on_triples(server, triples)
        everything[server.label] = {"reference": ref, "triples": tri}

        print(f"\n## {server.label} ({server.url})")
        cos = ref["cosines"]
        if cos:
            low_id = min(cos, key=cos.get)
            print(f"cosine to the library: lowest {cos[low_id]:.6f} ({low_id}), median {statistics.median(cos.values()):.6f}, "
                  f"{len(cos)} texts; norm {min(ref['norms']):.4f}..{max(ref['norms']):.4f}")
            for ident in sorted((i for i in cos if cos[i] < 0.99), key=cos.get):
                print(f"  below 0.99: {ident}: {cos[ident]:.4f}")
        for ident, err in ref["errors"].items():
            print(f"  error: {ident}: {err}")
        verdict, differ = usage_summary(ref["usage"])
        print(f"usage.prompt_tokens vs the tokenizer: {verdict}")
        for ident, got, want in differ:
            print(f"  {ident}: server {got}, tokenizer {want}")

        print("triple        cos(a,para) cos(a,unrel)  margin")
        for ident, t in tri["triples"].items():
            print(f"  {ident:<12} {t['paraphrase']:>9.4f} {t['unrelated']:>11.4f} {t['margin']:>8.4f}")
        for ident, err in tri["errors"].items():
            print(f"  error: {ident}: {err}")

    print("\n## Summary")
    print("| server | lowest cosine | median cosine | texts < 0.99 | prompt_tokens = tokenizer | "
          "min margin | median margin | margin <= 0.05 | margin <= 0.0 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, r in everything.items():
        cos = r["reference"]["cosines"]
        margins = [t["margin"] for t in r["triples"]["triples"].values()]
        verdict, _ = usage_summary(r["reference"]["usage"])
        errors = len(r["reference"]["errors"]) + len(r["triples"]["errors"])
        low = f"{min(cos.values()):.6f}" if cos else "-"
        med = f"{statistics.median(cos.values()):.6f}" if cos else "-"
        below = sum(1 for c in cos.values() if c < 0.99)
        mmin = f"{min(margins):.4f}" if margins else "-"
        mmed = f"{statistics.median(margins):.4f}" if margins else "-"
        print(f"| {label} | {low} | {med} | {below}/{len(cos)} | {verdict} | {mmin} | {mmed} | "
              f"{sum(1 for m in margins if m <= 0.05)}/{len(margins)} | {sum(1 for m in margins if m <= 0.0)}/{len(margins)} |"
              + (f" ({errors} errors)" if errors else ""))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"reference": args.reference, "triples": args.triples, "servers": everything}, f, indent=1)


if __name__ == "__main__":
    main()
