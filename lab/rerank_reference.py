"""Writes reference rerank scores: what the model's own library (sentence-transformers'
CrossEncoder) gives for a fixed set of (query, documents) cases, as JSON Lines on standard
output.

Usage: python lab/rerank_reference.py MODEL_DIR [--name SERVED_NAME] > FILE
       python lab/rerank_reference.py MODEL_DIR --lexical   (prints the lexical-signal check)

Line 1 is a header (model, library versions, activation, max length, truncation strategy,
the sha256 of model.safetensors); then one line per case:
{"id", "note", "query", "documents", "raw", "scores", "tokens", "tokens_untruncated",
 "truncated", "ranking"}: "raw" are the classifier's logits (activation_fct=Identity),
"scores" the library's default output (sigmoid for one label), "tokens" the pair's length
as the model sees it ([CLS] query [SEP] document [SEP], after the library's longest_first
truncation at max_length), "tokens_untruncated" the same without truncation, "ranking" the
document indices by descending score (ties: lowest index first, Python's stable sort); for
cases with a blank document, "blank_as_query_only": [{"index", "raw", "score", "tokens"}], the
score of [CLS] query [SEP] alone, which is what a server that drops the empty segment gives.
Every pair is scored alone (one predict call per pair, no padding), on CPU.
Imports only sentence-transformers, transformers, torch and the standard library.
"""

import argparse
import hashlib
import json
import os
import sys

import sentence_transformers
import torch
import transformers
from sentence_transformers import CrossEncoder

# Ordinary English prose, repeated and cut to a token budget for the long cases.
LONG_PARAGRAPH = (
    "Every morning the harbour town wakes up slowly. Fishing boats come back before sunrise, "
    "and the market opens as soon as the first crates of fish are carried up the stone steps. "
    "Shopkeepers sweep the pavement, a baker sets out warm bread by the door, and children walk "
    "to school in small groups, talking about the weekend. By nine o'clock the cafes are full of "
    "people reading newspapers and planning their day. In the afternoon the wind usually turns, "
    "clouds gather over the hills, and a short rain washes the streets before the evening light "
    "comes back across the water. "
)

QUERY = "what is the capital of france"
DOCUMENTS = [
    "Paris is the capital and largest city of France.",
    "The Eiffel Tower was completed in 1889.",
    "Berlin is the capital of Germany.",
    "Cats sleep for most of the day.",
    "France borders Spain, Italy, Germany, Belgium and Switzerland.",
]
TOPICS = ["the weather", "a train timetable", "a bread recipe", "football results", "a museum",
          "the stock market", "a garden", "a mountain walk", "a piano lesson", "a new phone"]


def pair_tokens(tokenizer, query, document, max_length=None):
    """The pair's length as CrossEncoder.predict tokenizes it: as lists (a batch of one). The
    difference matters for an empty document: transformers treats text_pair="" in a single
    call as no pair at all ([CLS] q [SEP], 8 tokens for QUERY) but in a batch as an empty
    second segment ([CLS] q [SEP] [SEP], 9 tokens), and the library scores the latter."""
    kw = {"truncation": "longest_first", "max_length": max_length} if max_length else {"truncation": False}
    if document is None:
        return len(tokenizer([query], **kw)["input_ids"][0])
    return len(tokenizer([query], [document], **kw)["input_ids"][0])


def prose(tokenizer, target, prefix="", suffix=""):
    """prefix + a word-boundary prefix of the repeated paragraph + suffix whose own token
    count (with [CLS] and [SEP]) is exactly `target`: the longest prefix not over it, then
    single-token words ("the") to make up the difference."""
    words = (LONG_PARAGRAPH * 40).split()

    def text_of(body):
        return " ".join(x for x in [prefix, body, suffix] if x)

    def count(text):
        return len(tokenizer(text, truncation=False)["input_ids"])

    lo, hi = 0, len(words)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(text_of(" ".join(words[:mid]))) <= target:
            lo = mid
        else:
            hi = mid - 1
    body = " ".join(words[:lo])
    while count(text_of(body)) < target:
        body += " the"
    if count(text_of(body)) != target:
        raise SystemExit(f"could not make a text of {target} tokens")
    return text_of(body)


def doc_for_pair(tokenizer, query, pair_target):
    """An English document whose pair with `query` is exactly pair_target tokens untruncated."""
    q = len(tokenizer(query, truncation=False)["input_ids"])  # [CLS] q [SEP]
    # The pair is [CLS] q [SEP] d [SEP]: the document alone is [CLS] d [SEP], one more than
    # what it adds to the pair.
    doc = prose(tokenizer, pair_target - q + 1)
    n = pair_tokens(tokenizer, query, doc)
    if n != pair_target:
        raise SystemExit(f"could not make a pair of {pair_target} tokens (got {n})")
    return doc


def cases(tokenizer, max_len):
    out = []

    def add(ident, note, query, documents):
        out.append({"id": ident, "note": note, "query": query, "documents": documents})

    add("en-basic", "ordinary English; the first document is the one a person would call relevant",
        QUERY, DOCUMENTS)
    add("en-shuffled", "the documents of en-basic in another order (a document's score must not change)",
        QUERY, [DOCUMENTS[i] for i in [3, 0, 4, 2, 1]])
    add("en-single", "one document", QUERY, [DOCUMENTS[0]])
    add("en-neighbours", "the first document of en-basic with other neighbours",
        QUERY, [DOCUMENTS[0], "Tokyo will be sunny tomorrow.", "Use sorted() to sort a list in Python."])
    add("duplicate-documents", "the same document three times, twice adjacent (equal scores; the tie order is the server's)",
        QUERY, [DOCUMENTS[2], DOCUMENTS[0], DOCUMENTS[2], DOCUMENTS[3], DOCUMENTS[2]])
    add("tei-ties", "TEI's tie test: [\"test\", \"other\", \"test\"]", "test query", ["test", "other", "test"])
    add("empty-document", "an empty-string document among ordinary ones (the library scores [CLS] q [SEP] [SEP]; "
        "a server that tokenizes the pair in a single call with text_pair=\"\" scores [CLS] q [SEP])",
        QUERY, [DOCUMENTS[0], "", DOCUMENTS[3]])
    add("whitespace-document", "a whitespace-only document and one with surrounding spaces "
        "(WordPiece ignores whitespace: the library scores them as \"\" and the stripped text)",
        QUERY, ["   ", "  " + DOCUMENTS[0] + "  ", DOCUMENTS[0]])
    add("empty-query", "an empty query", "", DOCUMENTS[:3])
    add("ko", "Korean query and documents", "대한민국의 수도는 어디입니까?",
        ["서울은 대한민국의 수도입니다.", "부산행 기차는 오전 아홉 시에 출발합니다.", "고양이는 하루 대부분을 잠을 잡니다."])
    add("ja", "Japanese query and documents", "明日の東京の天気は？",
        ["明日の東京は雨が降るでしょう。", "図書館は毎朝八時に開きます。", "猫は一日の大半を寝て過ごします。"])
    add("accented-latin", "French, German and Spanish with accents",
        "Quelle maladie fragilise les os ?",
        ["L'ostéoporose fragilise les os ; la sarcoïdose touche surtout les poumons.",
         "Die Brücke über den Fluss wurde für den Verkehr gesperrt.",
         "El niño comió paella en Valencia el miércoles."])
    add("mixed-scripts", "one query, documents in eight scripts",
        "city", ["Paris is a city.", "서울은 도시입니다.", "東京は都市です。", "北京是一座城市。",
                 "Москва — город.", "القاهرة مدينة.", "Zürich ist eine Stadt.", "🚀🎉🍕"])

    under = [doc_for_pair(tokenizer, QUERY, n) for n in (400, 500, max_len)]
    add("long-document-under", f"documents whose pairs are 400, 500 and {max_len} tokens (at the limit, not truncated), "
        "then a short one", QUERY, under + [DOCUMENTS[0]])
    over = [doc_for_pair(tokenizer, QUERY, n) for n in (max_len + 1, 600, 1000)]
    add("long-document-over", f"documents whose pairs are {max_len + 1}, 600 and 1000 tokens untruncated "
        "(the library cuts the document, the longer of the two), then a short one", QUERY, over + [DOCUMENTS[0]])

    signal = "what is the capital of france"
    long_q = prose(tokenizer, 600, suffix=signal)
    add("long-query", "a 600-token query (with [CLS]/[SEP]) that ends with the question; "
        "the library's longest_first cuts the query's end, question included",
        long_q, [DOCUMENTS[0], DOCUMENTS[3]])
    long_q_under = prose(tokenizer, 400, suffix=signal)
    add("long-query-under", "a 400-token query that ends with the question: under the limit with each document",
        long_q_under, [DOCUMENTS[0], DOCUMENTS[3]])
    both = prose(tokenizer, 300)
    add("long-both", "a 300-token query and a 300-token document (longest_first cuts both, the longer first)",
        both, [prose(tokenizer, 300, prefix="Paris."), DOCUMENTS[0]])

    add("many-100", "100 short documents", QUERY,
        [f"Document {i} is about {TOPICS[i % len(TOPICS)]}." for i in range(100)])
    add("many-1000", "1000 short documents", QUERY,
        [f"Note {i}: a few words on {TOPICS[(i * 7) % len(TOPICS)]}." for i in range(1000)])
    return out


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def f32(x):
    return float(torch.tensor(x, dtype=torch.float32).item())


def score_pairs(model, query, documents):
    raw, act = [], []
    for d in documents:
        r = model.predict([(query, d)], activation_fct=torch.nn.Identity(), convert_to_numpy=True,
                          show_progress_bar=False)
        a = model.predict([(query, d)], convert_to_numpy=True, show_progress_bar=False)
        raw.append(f32(r[0]))
        act.append(f32(a[0]))
    return raw, act


def query_only(model, query):
    """Raw and activated score of [CLS] query [SEP] with no second segment."""
    enc = model.tokenizer([query], truncation="longest_first", max_length=model.tokenizer.model_max_length,
                          return_tensors="pt")
    with torch.no_grad():
        logit = model.model(**enc).logits[0, 0]
    return f32(logit), f32(torch.sigmoid(logit))


def lexical_check(model):
    """Does the model prefer the document that shares the query's words? 40 English queries
    "VERB SUBJECT work" (10 subjects x 4 question words). For each query, two candidate lists
    built from one template, so that only the words differ: the 10 queries with the same
    question word as documents (the query itself among them), and "Here is Q explained
    simply." for the same 10. Prints how often the matching document ranks first (chance
    1 in 10) and its mean rank (chance 5.5)."""
    subjects = ["cats", "trains", "pizza", "guitars", "rain", "football", "gardens", "pianos",
                "volcanoes", "libraries"]
    verbs = ["how do", "why do", "where do", "when do"]
    for label, template in [("the query itself", "{}"), ("Here is <query> explained simply.",
                                                         "Here is {} explained simply.")]:
        first = 0
        ranks = []
        for v in verbs:
            group = [f"{v} {s} work" for s in subjects]
            docs = [template.format(g) for g in group]
            for i, q in enumerate(group):
                raw, _ = score_pairs(model, q, docs)
                rank = 1 + sum(r > raw[i] for r in raw)
                first += rank == 1
                ranks.append(rank)
        n = len(ranks)
        print(f"{label}: ranks first for {first}/{n} queries (chance {n / 10:.0f}); "
              f"mean rank {sum(ranks) / n:.2f} of 10 (chance 5.50)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir")
    parser.add_argument("--name", help="the model name servers report (default: the directory's name)")
    parser.add_argument("--lexical", action="store_true", help="print the lexical-signal check and exit")
    args = parser.parse_args()
    torch.set_num_threads(1)

    model = CrossEncoder(args.model_dir, device="cpu")
    if args.lexical:
        lexical_check(model)
        return
    tokenizer = model.tokenizer
    max_len = int(model.max_length or tokenizer.model_max_length)
    name = args.name or os.path.basename(os.path.normpath(args.model_dir))
    act = model.default_activation_function
    activation = {"Sigmoid": "sigmoid", "Identity": "identity"}.get(type(act).__name__, type(act).__name__)
    header = {
        "kind": "rerank",
        "model": name,
        "architecture": (model.config.architectures or [None])[0],
        "num_labels": int(model.config.num_labels),
        "library": "sentence-transformers",
        "class": "CrossEncoder",
        "version": sentence_transformers.__version__,
        "versions": {
            "sentence-transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
        },
        "activation": activation,
        "max_length": max_len,
        "truncation": "longest_first",
        "pair_template": "[CLS] query [SEP] document [SEP]",
        "token_type_ids": "token_type_ids" in tokenizer.model_input_names,
        "model_sha256": sha256(os.path.join(args.model_dir, "model.safetensors")),
        "made_by": "lab/rerank_reference.py",
    }
    out = sys.stdout
    out.write(json.dumps(header, ensure_ascii=False) + "\n")
    for case in cases(tokenizer, max_len):
        q, docs = case["query"], case["documents"]
        raw, scores = score_pairs(model, q, docs)
        tokens = [pair_tokens(tokenizer, q, d, max_len) for d in docs]
        untrunc = [pair_tokens(tokenizer, q, d) for d in docs]
        ranking = sorted(range(len(docs)), key=lambda i: -scores[i])
        row = dict(case, raw=raw, scores=scores, tokens=tokens, tokens_untruncated=untrunc,
                   truncated=[u > t for u, t in zip(untrunc, tokens)], ranking=ranking)
        blank = [i for i, d in enumerate(docs) if not d.strip()]
        if blank:
            # What a blank document scores when the pair is encoded as the query alone.
            r, a = query_only(model, q)
            row["blank_as_query_only"] = [{"index": i, "raw": r, "score": a, "tokens": pair_tokens(tokenizer, q, None)}
                                          for i in blank]
        out.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
