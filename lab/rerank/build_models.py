"""Builds the lab's tiny cross-encoders (rerankers) from the registries alone: seeded random
weights and the lab's all-MiniLM-L6-v2 WordPiece tokenizer. No weights are downloaded.

Usage: python lab/rerank/build_models.py TOKENIZER_DIR OUT_DIR [--arch bert|roberta|all]

Writes OUT_DIR/tiny-rerank-bert and/or OUT_DIR/tiny-rerank-roberta, each a directory that
sentence-transformers' CrossEncoder, vLLM, Infinity and convert_hf_to_gguf.py read:
config.json, model.safetensors, tokenizer.json, tokenizer_config.json, vocab.txt,
special_tokens_map.json. Prints one "sha256  path" line per file. Two runs with the same
library versions give byte-identical files (lab/rerank/build.sh checks it).

The models (hidden 64, 2 heads of 32, 2 layers, intermediate 256, 1 label):
- tiny-rerank-bert: BertForSequenceClassification (BERT pooler + classifier, the
  ms-marco-MiniLM cross-encoder layout), 512 positions, 2 token types ([CLS] q [SEP] d [SEP],
  types 0 then 1).
- tiny-rerank-roberta: RobertaForSequenceClassification (RoBERTa classification head on the
  first token, no pooler), 514 positions (RoBERTa's offset of pad_token_id + 1 = 2), one token
  type, and a tokenizer that returns no token_type_ids: the variant llama.cpp can compute.

Weights: every matrix, embedding and bias from numpy's PCG64 generator (SEED), normal with
standard deviation STD (biases STD/2); LayerNorms 1 and 0. Then the last layer (BERT's
classifier, RoBERTa's out_proj) is rescaled and its bias set so that the raw logits of a
fixed set of 64 English pairs (CALIBRATION_* below) have mean 0 and standard deviation
TARGET_SD: their sigmoid then spreads over about 0.03-0.97 instead of all sitting near 0.5
(the default 0.02 initialisation gives logits within 0.001 of each other). Random weights
know nothing of relevance: the scores are a fixed arbitrary function of the token sequence.
"""

import argparse
import hashlib
import json
import os
import shutil
import sys

import numpy as np
import torch
import transformers
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification, RobertaConfig,
                          RobertaForSequenceClassification)

SEED = 20240
STD = 0.2
TARGET_SD = 1.5
HIDDEN = 64
HEADS = 2
LAYERS = 2
INTERMEDIATE = 256
VOCAB = 30522
MAX_TOKENS = 512

# Calibration pairs: every query with every document (8 x 8).
CALIBRATION_QUERIES = [
    "what is the capital of france", "how do cats sleep", "python list sort",
    "weather in tokyo tomorrow", "best pizza recipe", "symptoms of flu",
    "train schedule berlin", "how to learn guitar",
]
CALIBRATION_DOCUMENTS = [
    "Paris is the capital of France.", "Cats sleep for most of the day.",
    "Use sorted() to sort a list in Python.", "Tokyo will be sunny tomorrow.",
    "Knead the dough and bake the pizza at high heat.", "Flu causes fever and cough.",
    "Trains leave Berlin every hour.", "Practice chords every day to learn guitar.",
]

TOKENIZER_FILES = ["vocab.txt", "special_tokens_map.json"]


def tokenizer_json(src):
    """The lab model's tokenizer.json without its fixed 128-token truncation and padding."""
    with open(os.path.join(src, "tokenizer.json"), encoding="utf-8") as f:
        data = json.load(f)
    data["truncation"] = None
    data["padding"] = None
    return data


def tokenizer_config(arch):
    cfg = {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": True,
        "do_basic_tokenize": True,
        "never_split": None,
        "tokenize_chinese_chars": True,
        "strip_accents": None,
        "unk_token": "[UNK]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "cls_token": "[CLS]",
        "mask_token": "[MASK]",
        "model_max_length": MAX_TOKENS,
        "clean_up_tokenization_spaces": True,
    }
    if arch == "roberta":
        # One token type: the model has no embedding for type 1, so the tokenizer must not
        # make token_type_ids (transformers then uses zeros, as llama.cpp always does).
        cfg["model_input_names"] = ["input_ids", "attention_mask"]
        # For llama.cpp. convert_hf_to_gguf.py converts a RobertaForSequenceClassification
        # with a WordPiece vocabulary only from a directory without tokenizer.json (with one it
        # reads a BPE tokenizer; lab/rerank/gguf.sh leaves it out), and then gguf-py's
        # SpecialVocab takes tokenizer.ggml.add_bos_token / add_eos_token / add_sep_token from
        # these keys. llama-server's rerank prompt (format_prompt_rerank in
        # tools/server/server-common.cpp) is BOS q [EOS if add_eos] [SEP if add_sep] d
        # [EOS if add_eos]; its WordPiece defaults (add_eos false, add_sep true, no EOS) give
        # [CLS] q [SEP] d without the last [SEP]. These give [CLS] q [SEP] d [SEP], the pair
        # transformers builds.
        cfg["add_bos_token"] = True
        cfg["add_eos_token"] = True
        cfg["add_sep_token"] = False
        cfg["bos_token"] = "[CLS]"
        cfg["eos_token"] = "[SEP]"
    return cfg


def model_config(arch):
    common = dict(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                  intermediate_size=INTERMEDIATE, hidden_act="gelu", num_labels=1, layer_norm_eps=1e-12,
                  initializer_range=STD)
    if arch == "bert":
        return BertConfig(max_position_embeddings=MAX_TOKENS, type_vocab_size=2, pad_token_id=0, **common)
    # RoBERTa numbers positions from pad_token_id + 1. With pad_token_id 1 ("[unused0]" in this
    # vocabulary, never produced by the tokenizer) positions start at 2, the layout
    # convert_hf_to_gguf.py assumes when it drops the first two position rows.
    return RobertaConfig(max_position_embeddings=MAX_TOKENS + 2, type_vocab_size=1, pad_token_id=1,
                         bos_token_id=101, eos_token_id=102, **common)


def last_layer(arch):
    return ("classifier.weight", "classifier.bias") if arch == "bert" else \
        ("classifier.out_proj.weight", "classifier.out_proj.bias")


def build(arch, tokenizer_dir, out):
    torch.manual_seed(0)
    cfg = model_config(arch)
    cfg.architectures = ["BertForSequenceClassification" if arch == "bert" else "RobertaForSequenceClassification"]
    cfg.id2label = {0: "LABEL_0"}
    cfg.label2id = {"LABEL_0": 0}
    model = (BertForSequenceClassification if arch == "bert" else RobertaForSequenceClassification)(cfg).eval()

    rng = np.random.default_rng(SEED + (0 if arch == "bert" else 1))
    state = model.state_dict()
    new = {}
    for name in sorted(state):
        shape = tuple(state[name].shape)
        if "LayerNorm" in name:
            value = np.ones(shape, np.float32) if name.endswith("weight") else np.zeros(shape, np.float32)
        else:
            std = STD / 2 if name.endswith("bias") else STD
            value = (rng.standard_normal(shape) * std).astype(np.float32)
        new[name] = torch.from_numpy(value)
    model.load_state_dict(new)

    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    for f in TOKENIZER_FILES:
        shutil.copyfile(os.path.join(tokenizer_dir, f), os.path.join(out, f))
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_json(tokenizer_dir), f, ensure_ascii=False, indent=2)
    with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_config(arch), f, indent=2)
        f.write("\n")

    # Calibrate the last layer on the fixed pairs (float64 arithmetic, float32 weights).
    tok = AutoTokenizer.from_pretrained(out)
    qs = [q for q in CALIBRATION_QUERIES for _ in CALIBRATION_DOCUMENTS]
    ds = [d for _ in CALIBRATION_QUERIES for d in CALIBRATION_DOCUMENTS]
    enc = tok(qs, ds, padding=True, truncation="longest_first", return_tensors="pt")
    with torch.no_grad():
        logits = model(**enc).logits[:, 0].double().numpy()
    w_name, b_name = last_layer(arch)
    sd = model.state_dict()
    w = sd[w_name].double().numpy()
    b = sd[b_name].double().numpy()
    scale = TARGET_SD / logits.std()
    # logit' = scale * (logit - b) + b' with mean 0: b' = -scale * (mean - b).
    w2 = (w * scale).astype(np.float32)
    b2 = (-scale * (logits.mean() - b)).astype(np.float32)
    sd[w_name] = torch.from_numpy(w2)
    sd[b_name] = torch.from_numpy(b2)
    model.load_state_dict(sd)

    model.save_pretrained(out, safe_serialization=True)
    with torch.no_grad():
        after = model(**enc).logits[:, 0].double().numpy()
    sig = 1 / (1 + np.exp(-after))
    print(f"{arch}: calibration logits mean {after.mean():+.4f} sd {after.std():.4f} "
          f"range {after.min():+.3f}..{after.max():+.3f}; sigmoid {sig.min():.3f}..{sig.max():.3f}",
          file=sys.stderr)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tokenizer_dir", help="the lab's all-MiniLM-L6-v2 directory (its tokenizer is reused)")
    parser.add_argument("out_dir")
    parser.add_argument("--arch", choices=["bert", "roberta", "all"], default="all")
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    print(f"transformers {transformers.__version__}, torch {torch.__version__}, numpy {np.__version__}",
          file=sys.stderr)
    for arch in (["bert", "roberta"] if args.arch == "all" else [args.arch]):
        out = os.path.join(args.out_dir, f"tiny-rerank-{arch}")
        build(arch, args.tokenizer_dir, out)
        for f in sorted(os.listdir(out)):
            print(f"{sha256(os.path.join(out, f))}  tiny-rerank-{arch}/{f}")


if __name__ == "__main__":
    main()
