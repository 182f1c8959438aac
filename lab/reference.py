"""Writes reference vectors: what the model's own library (sentence-transformers) makes of
each probe text, as JSON Lines on standard output.

Usage: python lab/reference.py MODEL_DIR [--texts fixtures/probe-texts.jsonl]
                               [--name SERVED_NAME] > FILE

Line 1 is a header (model name, library versions, max_seq_length); then one line per text:
{"id", "text", "embedding" (normalised float32 values, written in full), "tokens" (the
model's own tokenizer count including special tokens, e.g. [CLS] and [SEP] for BERT, which
is what a server's usage.prompt_tokens reports)}. Besides every line of the texts file, one
long English text "en-long" is added that tokenises to exactly max_seq_length - 8 tokens.
Imports only sentence-transformers, transformers, torch and the standard library.
"""

import argparse
import json
import os
import sys

import sentence_transformers
import torch
import transformers
from sentence_transformers import SentenceTransformer

DEFAULT_TEXTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "probe-texts.jsonl")

# Ordinary English prose, repeated and cut to the token budget for "en-long".
LONG_PARAGRAPH = (
    "Every morning the harbour town wakes up slowly. Fishing boats come back before sunrise, "
    "and the market opens as soon as the first crates of fish are carried up the stone steps. "
    "Shopkeepers sweep the pavement, a baker sets out warm bread by the door, and children walk "
    "to school in small groups, talking about the weekend. By nine o'clock the cafes are full of "
    "people reading newspapers and planning their day. In the afternoon the wind usually turns, "
    "clouds gather over the hills, and a short rain washes the streets before the evening light "
    "comes back across the water. "
)


def token_count(tokenizer, text):
    return len(tokenizer(text, add_special_tokens=True)["input_ids"])


def long_text(tokenizer, target):
    """The longest word-boundary prefix of the repeated paragraph with exactly `target` tokens
    (special tokens included)."""
    words = (LONG_PARAGRAPH * 8).split()
    best = None
    for end in range(1, len(words) + 1):
        text = " ".join(words[:end])
        n = token_count(tokenizer, text)
        if n == target:
            best = text
        elif n > target:
            break
    if best is None:
        raise SystemExit(f"no prefix of the paragraph has exactly {target} tokens")
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir")
    parser.add_argument("--texts", default=DEFAULT_TEXTS)
    parser.add_argument("--name", help="the model name servers report (default: the directory's name)")
    args = parser.parse_args()

    model = SentenceTransformer(args.model_dir, device="cpu")
    tokenizer = model.tokenizer
    max_len = int(model.max_seq_length)
    name = args.name or os.path.basename(os.path.normpath(args.model_dir))

    items = []
    with open(args.texts, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                items.append((row["id"], row["text"]))
    items.append(("en-long", long_text(tokenizer, max_len - 8)))

    versions = {
        "sentence-transformers": sentence_transformers.__version__,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
    }
    header = {
        "model": name,
        "library": "sentence-transformers",
        "version": sentence_transformers.__version__,
        "normalized": True,
        "versions": versions,
        "max_seq_length": max_len,
        "made_by": "lab/reference.py",
    }
    out = sys.stdout
    out.write(json.dumps(header, ensure_ascii=False) + "\n")
    for ident, text in items:
        tokens = token_count(tokenizer, text)
        if tokens > max_len:
            print(f"warning: {ident} has {tokens} tokens, over max_seq_length {max_len}: the library truncates it",
                  file=sys.stderr)
        # One text per call, as a server embeds a single input.
        vector = model.encode(text, normalize_embeddings=True, convert_to_numpy=True)
        row = {"id": ident, "text": text, "embedding": [float(x) for x in vector], "tokens": tokens}
        out.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
