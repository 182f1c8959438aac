"""The real Python clients with their default settings against BASE_URL, as embedcheck's
client profiles model them: what each client experienced, to compare with the profiles.

  profile_check.py BASE_URL MODEL [--aggressive] [--json]

- openai-python: `client.embeddings.create(model=M, input=X)` with nothing else set
  (base64 on the wire, two retries), for one sentence and a batch of four documents, each
  compared with the same input asked for with `encoding_format="float"`;
- langchain-openai: `OpenAIEmbeddings(model=M, base_url=B, api_key=K).embed_query(T)`
  (tiktoken's cl100k token ids on the wire, through the same SDK) for each probe text,
  compared with the SDK's float vector of the same text sent as a string; and
  `embed_documents([T, ""])` for its extra `input: ""` call. "embedding servers" (cl100k id
  95711, beyond most embedding models' vocabularies) is sent only with --aggressive: Hugging
  Face TEI 1.9.3 aborts on token ids outside its vocabulary.

Per client: worked or raised (the client's own message), vector length, the lowest cosine
to the reference vectors, and retries seen (the SDK's own "Retrying request" log lines).
The exit status is 0 whatever the clients experienced; 2 for bad arguments.
"""

import json
import logging
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
STATE = os.environ.get("EMBEDCHECK_LAB_DIR") or os.path.join(HERE, "..", ".state")
# tiktoken reads cl100k_base from its cache and never downloads (lab/README.md).
os.environ.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(STATE, "tiktoken-cache"))

from langchain_openai import OpenAIEmbeddings  # noqa: E402
from openai import OpenAI  # noqa: E402
import openai  # noqa: E402
import langchain_openai  # noqa: E402
from importlib.metadata import version  # noqa: E402

# The texts embedcheck's profiles send (crates/embedcheck-core/src/contracts/embeddings/requests.rs).
SENTENCE = "The quick brown fox jumps over the lazy dog."
BATCH = [
    "Embeddings map text to vectors.",
    "Retrieval ranks documents by cosine similarity.",
    "서울은 대한민국의 수도입니다.",
    "A migration should not change the answers.",
]
# The vocabulary probes of the LangChain profile, with their cl100k_base ids.
SAFE_PROBES = ["hello world"]  # [15339, 1917]: ids every common vocabulary has
AGGRESSIVE_PROBES = ["embedding servers"]  # [95711, 16692]
# Two vectors this close are the same embedding (embedcheck's batch tolerance).
SAME = 0.999


class RetryCounter(logging.Handler):
    """Counts the SDK's "Retrying request in …" log records."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.count = 0

    def emit(self, record):
        if record.getMessage().startswith("Retrying request"):
            self.count += 1


def cosine(a, b):
    if len(a) != len(b) or not a:
        return 0.0
    dot = sum(x * y for x, y in zip(a, b))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def first_line(e):
    text = str(e).splitlines()[0] if str(e) else ""
    return f"{type(e).__name__}: {text}"


def outcome(name, run, counter):
    """Runs one client's calls; `run` fills `result` (dims, cosine, notes) or raises."""
    counter.count = 0
    result = {"client": name, "version": version(name), "worked": False, "raised": None,
              "dims": None, "cosine": None, "retries": 0, "notes": []}
    try:
        run(result)
    except Exception as e:  # the client's own error is the outcome
        result["raised"] = first_line(e)
    low = result["cosine"]
    result["worked"] = result["raised"] is None and low is not None and low >= SAME
    result["retries"] = result.pop("probe_retries", counter.count)
    return result


def lowest(result, c, dims):
    result["cosine"] = c if result["cosine"] is None else min(result["cosine"], c)
    result["dims"] = dims


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    flags = {a for a in sys.argv[1:] if a.startswith("--")}
    if len(args) != 2 or flags - {"--aggressive", "--json"}:
        print("usage: profile_check.py BASE_URL MODEL [--aggressive] [--json]", file=sys.stderr)
        sys.exit(2)
    base_url, model = args
    key = os.environ.get("OPENAI_API_KEY", "sk-none")
    counter = RetryCounter()
    logging.getLogger("openai").addHandler(counter)
    logging.getLogger("openai").setLevel(logging.INFO)
    # A client for reference vectors only: explicit floats, no retries.
    reference = OpenAI(base_url=base_url, api_key=key, max_retries=0)

    def floats(inputs):
        r = reference.embeddings.create(model=model, input=inputs, encoding_format="float")
        return [d.embedding for d in r.data]

    def sdk(result):
        client = OpenAI(base_url=base_url, api_key=key)  # every default
        for inputs in (SENTENCE, BATCH):
            got = [d.embedding for d in client.embeddings.create(model=model, input=inputs).data]
            want = floats(inputs)
            if len(got) != len(want):
                result["notes"].append(f"{len(got)} vectors for {len(want)} inputs")
                lowest(result, 0.0, len(got[0]) if got else 0)
                continue
            for g, w in zip(got, want):
                lowest(result, cosine(g, w), len(g))

    probes = SAFE_PROBES + (AGGRESSIVE_PROBES if "--aggressive" in flags else [])

    def langchain(result):
        lc = OpenAIEmbeddings(model=model, base_url=base_url, api_key=key)  # every default
        notes = result["notes"]
        for text in probes:
            try:
                got = lc.embed_query(text)
            except Exception as e:
                notes.append(f"{text!r}: raised {first_line(e)}")
                result["raised"] = result["raised"] or first_line(e)
                continue
            c = cosine(got, floats(text)[0])
            notes.append(f"{text!r}: cosine {c:.4f} to the string's vector")
            lowest(result, c, len(got))
        result["probe_retries"] = counter.count
        try:
            lc.embed_documents([probes[0], ""])
            notes.append("an empty text: embedded")
        except Exception as e:
            notes.append(f"an empty text: raised {first_line(e)}")
        if counter.count > result["probe_retries"]:
            notes.append(f"the empty text's call retried {counter.count - result['probe_retries']} times")

    results = [outcome("openai", sdk, counter), outcome("langchain-openai", langchain, counter)]
    results[0]["client"] = "openai-python"
    for r in results:
        if "--json" in flags:
            print(json.dumps(r))
        else:
            how = "worked" if r["worked"] else f"raised {r['raised']}" if r["raised"] else "wrong vectors"
            low = "-" if r["cosine"] is None else f"{r['cosine']:.4f}"
            print(f"{r['client']} {r['version']}: {how}; dims {r['dims']}; lowest cosine {low}; "
                  f"retries {r['retries']}" + "".join(f"; {n}" for n in r["notes"]))


if __name__ == "__main__":
    main()
