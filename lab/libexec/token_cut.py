"""Cuts over-length fixture documents to N token ids with the model's tokenizer and
compares the new server's vector of the ids with the old server's of the whole text."""
import json
import math
import sys
import urllib.error
import urllib.request

from transformers import AutoTokenizer

old_url, new_url, model, model_dir, documents, limit = sys.argv[1:7]
limit = int(limit)
tokenizer = AutoTokenizer.from_pretrained(model_dir)


def embed(base, item):
    body = json.dumps({"model": model, "input": [item]}).encode()
    request = urllib.request.Request(
        base + "/embeddings", data=body, headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.load(answer)["data"][0]["embedding"]
    except urllib.error.HTTPError as refused:
        return refused.code


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


lowest, cut = 1.0, 0
for line in open(documents, encoding="utf-8"):
    doc = json.loads(line)
    if len(tokenizer(doc["text"])["input_ids"]) <= limit:
        continue
    ids = tokenizer(doc["text"], truncation=True, max_length=limit)["input_ids"]
    old, new = embed(old_url, doc["text"]), embed(new_url, ids)
    if not isinstance(new, list) or not isinstance(old, list):
        print(f"{doc['id']}: old {old if not isinstance(old, list) else 200}, new {new if not isinstance(new, list) else 200}")
        lowest = 0.0
        continue
    c = cosine(old, new)
    cut += 1
    lowest = min(lowest, c)
    print(f"{doc['id']}: {len(ids)} token ids, cosine {c:.6f}")
print(f"{cut} documents cut to {limit} token ids; lowest cosine {lowest:.6f}")
