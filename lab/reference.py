"""Writes reference vectors: what the model's own library (sentence-transformers) makes of
each probe text, as JSON Lines on standard output.

Usage: python lab/reference.py MODEL_DIR [--texts fixtures/probe-texts.jsonl]
                               [--name SERVED_NAME] [--ids] [--no-long] > FILE

Line 1 is a header (model name, library versions, max_seq_length); then one line per text:
{"id", "text", "embedding" (normalised float32 values, written in full), "tokens" (the
model's own tokenizer count including special tokens, e.g. [CLS] and [SEP] for BERT, which
is what a server's usage.prompt_tokens reports)}. Besides every line of the texts file, one
long English text "en-long" is added: exactly max_seq_length - 8 tokens for a model of up
to 512 tokens, and about 3,000 tokens for a model whose max_seq_length is above 512 (longer
than the 512 tokens some servers cut at silently, well inside the model's limit).

The header also carries "tokenizer" ({"normalizer": the Unicode normalisation form the
tokenizer applies ("NFC", "NFD", "NFKC", "NFKD"; BERT's accent-stripping normaliser is
NFD) or null, "appends_eos": whether it appends a special token after the text,
"eos_token"/"eos_token_id": that token, or null, "padding_side"}). A model with
sentence-transformers prompts (config_sentence_transformers.json, e.g. an
instruction-aware model with a "query" prompt) also gets, in the header, "prompts" (the
prompt strings by name), and on each line "query_embedding" and "query_tokens": the same
text embedded and counted with the model's query prompt, as
SentenceTransformer.encode(text, prompt_name="query") makes it.

sentence-transformers strips leading and trailing whitespace from every text before it
tokenises; servers do not. So a text with surrounding whitespace is refused: its reference
vector would not be the vector of the text a server is sent.

--ids adds "ids" to each line (the token ids with special tokens); --no-long leaves out en-long.
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


# en-long's length: a model of up to 512 tokens gets max_seq_length - 8; a longer one this.
LONG_TOKENS = 3000


def long_target(max_len):
    return max_len - 8 if max_len <= 512 else min(LONG_TOKENS, max_len - 8)


def long_text(tokenizer, target):
    """The longest word-boundary prefix of the repeated paragraph with exactly `target` tokens
    (special tokens included), or, if no prefix has exactly that many, the longest one with
    fewer."""
    repeats = 8
    while len(tokenizer(LONG_PARAGRAPH * repeats, verbose=False)["input_ids"]) <= target:
        repeats *= 2
    words = (LONG_PARAGRAPH * repeats).split()
    best = under = None
    for end in range(1, len(words) + 1):
        text = " ".join(words[:end])
        n = token_count(tokenizer, text)
        if n == target:
            best = text
        elif n > target:
            break
        else:
            under = text
    if best is None:
        if under is None:
            raise SystemExit(f"no prefix of the paragraph has {target} tokens or fewer")
        best = under
    return best


def unicode_form(normalizer):
    """The Unicode normalisation form a tokenizers normaliser applies, or None. BERT's
    normaliser strips accents (when strip_accents is set, or unset and lowercase is on)
    by decomposing every text first: NFD."""
    if not normalizer:
        return None
    if normalizer.get("type") in ("NFC", "NFD", "NFKC", "NFKD"):
        return normalizer["type"]
    if normalizer.get("type") == "BertNormalizer":
        strip = normalizer.get("strip_accents")
        if strip or (strip is None and normalizer.get("lowercase")):
            return "NFD"
        return None
    if normalizer.get("type") == "Sequence":
        for inner in normalizer.get("normalizers", []):
            form = unicode_form(inner)
            if form:
                return form
    return None


def tokenizer_facts(tokenizer):
    """What a checker needs to know of the tokenizer: its normaliser, and the special token it
    appends after a text (Qwen3-Embedding's <|endoftext|>), if any."""
    normalizer = None
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        normalizer = unicode_form(json.loads(backend.to_str()).get("normalizer"))
    plain = tokenizer("Hello world", add_special_tokens=False)["input_ids"]
    full = tokenizer("Hello world", add_special_tokens=True)["input_ids"]
    after = []
    for start in range(len(full) - len(plain) + 1):
        if full[start:start + len(plain)] == plain:
            after = full[start + len(plain):]
            break
    eos_id = after[-1] if after else None
    return {
        "normalizer": normalizer,
        "appends_eos": eos_id is not None,
        "eos_token": tokenizer.convert_ids_to_tokens(eos_id) if eos_id is not None else None,
        "eos_token_id": eos_id,
        "padding_side": tokenizer.padding_side,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir")
    parser.add_argument("--texts", default=DEFAULT_TEXTS)
    parser.add_argument("--name", help="the model name servers report (default: the directory's name)")
    parser.add_argument("--ids", action="store_true", help="add each text's token ids")
    parser.add_argument("--no-long", action="store_true", help="leave out en-long")
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
    if not args.no_long:
        items.append(("en-long", long_text(tokenizer, long_target(max_len))))
    for ident, text in items:
        if text != text.strip():
            raise SystemExit(f"{ident}: the text has leading or trailing whitespace, which sentence-transformers "
                             "strips before it embeds (servers do not): its reference vector would be another "
                             "text's; remove the whitespace or leave the text out")
    prompts = {k: v for k, v in (getattr(model, "prompts", None) or {}).items()}
    query_prompt = prompts.get("query") if prompts else None

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
    }
    if prompts:
        header["prompts"] = prompts
    header["tokenizer"] = tokenizer_facts(tokenizer)
    header["made_by"] = "lab/reference.py"
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
        if query_prompt is not None:
            query = model.encode(text, prompt_name="query", normalize_embeddings=True, convert_to_numpy=True)
            row["query_embedding"] = [float(x) for x in query]
            row["query_tokens"] = token_count(tokenizer, query_prompt + text)
        if args.ids:
            row["ids"] = tokenizer(text, add_special_tokens=True)["input_ids"]
        out.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
