"""Builds a tiny Qwen3-Embedding model with random weights and the real architecture and
tokenizer, from files the package registries provide, byte for byte the same every time.

Usage: python build_qwen3tiny.py LLAMA_CPP_DIR OUT_DIR {eos|noeos}
  LLAMA_CPP_DIR: the llama.cpp sources vendored in the llama-cpp-python sdist
                 (models/ggml-vocab-qwen2.gguf and gguf-py/ are read from it)
  OUT_DIR:       the model directory to write (must not exist)
  eos:           the tokenizer appends <|endoftext|> (id 151643) to every text, as
                 Qwen3-Embedding's tokenizer.json does since its fix (a TemplateProcessing
                 post-processor "$A <|endoftext|>")
  noeos:         the same model without that post-processor (a ByteLevel one, as
                 Qwen3-Embedding was first published): nothing is appended

What it writes (a sentence-transformers model directory):
  tokenizer.json, vocab.json, merges.txt  the qwen2 byte-level BPE of llama.cpp's vocab-only
      test file (151,643 tokens, 151,387 merges) plus Qwen3's 26 added tokens (151643-151668,
      flags as in Qwen3's tokenizer_config.json); NFC normaliser, qwen2 split regex
  tokenizer_config.json  Qwen2Tokenizer, eos_token <|im_end|>, pad_token <|endoftext|>,
      padding_side left
  config.json  Qwen3ForCausalLM: hidden 32, 2 layers, 4 heads / 2 KV heads, head_dim 32,
      intermediate 64, vocab 151669, 32768 positions, tied embeddings, float32, stamped with
      transformers 4.51.3
  model.safetensors  the Qwen3Model tensors without a "model." prefix (as Qwen3-Embedding
      ships them), every value from SHAKE-256 of a fixed seed and the tensor's name, so no
      library's random generator is involved; written by this script, not by a library
  modules.json, sentence_bert_config.json (max_seq_length 32768), config_sentence_transformers.json
      (prompts: query "Instruct: Given a web search query, retrieve relevant passages that
      answer the query\nQuery:", document ""), 1_Pooling/config.json (last token),
      2_Normalize/, README.md

Then it checks the tokenizer against llama.cpp's own test vectors for that vocab
(models/ggml-vocab-qwen2.gguf.inp/.out, with the `tokenizers` library) and that
transformers appends (or does not append) the EOS, and prints the sha256 of every file.
Needs numpy and tokenizers/transformers (the lab's gguf-convert venv); gguf-py from LLAMA_CPP_DIR.
"""

import hashlib
import json
import os
import struct
import sys

import numpy as np

VOCAB_GGUF_SHA256 = "44c2f46b715f585c6ab513970e8a006bfa5badd6108560054921cf598d154d8c"
SEED = b"embedcheck lab qwen3-embedding-tiny seed 1\0"

HIDDEN = 32
LAYERS = 2
HEADS = 4
KV_HEADS = 2
HEAD_DIM = 32
INTERMEDIATE = 64
N_REGULAR = 151643
MAX_POSITIONS = 32768

QUERY_PROMPT = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"

# Qwen3's added tokens (ids 151643-151668) and whether each is "special" (Qwen3's
# tokenizer_config.json: the chat and vision markers are, the tool/FIM/think ones are not).
ADDED = [
    ("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True),
    ("<|object_ref_start|>", True), ("<|object_ref_end|>", True), ("<|box_start|>", True),
    ("<|box_end|>", True), ("<|quad_start|>", True), ("<|quad_end|>", True),
    ("<|vision_start|>", True), ("<|vision_end|>", True), ("<|vision_pad|>", True),
    ("<|image_pad|>", True), ("<|video_pad|>", True), ("<tool_call>", False),
    ("</tool_call>", False), ("<|fim_prefix|>", False), ("<|fim_middle|>", False),
    ("<|fim_suffix|>", False), ("<|fim_pad|>", False), ("<|repo_name|>", False),
    ("<|file_sep|>", False), ("<tool_response>", False), ("</tool_response>", False),
    ("<think>", False), ("</think>", False),
]
VOCAB_SIZE = N_REGULAR + len(ADDED)  # 151669
EOS_ID = N_REGULAR  # <|endoftext|>

# The qwen2 pre-tokenizer split (Qwen2/Qwen3 tokenizer.json; llama.cpp's LLAMA_VOCAB_PRE_TYPE_QWEN2).
SPLIT_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")
BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_vocab(llama_cpp_dir):
    path = os.path.join(llama_cpp_dir, "models", "ggml-vocab-qwen2.gguf")
    got = sha256_file(path)
    if got != VOCAB_GGUF_SHA256:
        sys.exit(f"{path}: sha256 {got}, expected {VOCAB_GGUF_SHA256}")
    sys.path.insert(0, os.path.join(llama_cpp_dir, "gguf-py"))
    from gguf import GGUFReader  # the gguf-py vendored beside it

    reader = GGUFReader(path)

    def strings(key):
        field = reader.fields[key]
        return [bytes(field.parts[i]).decode("utf-8") for i in field.data]

    def scalar(key):
        field = reader.fields[key]
        return bytes(field.parts[field.data[0]]).decode("utf-8")

    if scalar("tokenizer.ggml.model") != "gpt2" or scalar("tokenizer.ggml.pre") != "qwen2":
        sys.exit(f"{path}: not a qwen2 byte-level BPE vocab")
    tokens = strings("tokenizer.ggml.tokens")
    types = reader.fields["tokenizer.ggml.token_type"]
    types = [int(types.parts[i][0]) for i in types.data]
    merges = strings("tokenizer.ggml.merges")
    # Ids 0..151642 are the regular tokens (type 1); the rest are control and padding entries.
    if types[:N_REGULAR] != [1] * N_REGULAR or types[N_REGULAR] == 1:
        sys.exit(f"{path}: expected {N_REGULAR} regular tokens first")
    regular = tokens[:N_REGULAR]
    if len(set(regular)) != N_REGULAR or len(merges) != 151387:
        sys.exit(f"{path}: unexpected vocab ({len(set(regular))} tokens, {len(merges)} merges)")
    return regular, merges


def added_tokens():
    return [{"id": N_REGULAR + i, "content": text, "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": False, "special": special}
            for i, (text, special) in enumerate(ADDED)]


def tokenizer_json(regular, merges, variant):
    if variant == "eos":
        eos = {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}
        post = {
            "type": "TemplateProcessing",
            "single": [{"Sequence": {"id": "A", "type_id": 0}}, eos],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, eos,
                     {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "<|endoftext|>", "type_id": 1}}],
            "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [EOS_ID],
                                                 "tokens": ["<|endoftext|>"]}},
        }
    else:
        post = dict(BYTE_LEVEL)
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added_tokens(),
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": SPLIT_REGEX}, "behavior": "Isolated", "invert": False},
            dict(BYTE_LEVEL),
        ]},
        "post_processor": post,
        "decoder": dict(BYTE_LEVEL),
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False, "vocab": {t: i for i, t in enumerate(regular)},
                  "merges": merges},
    }


def tokenizer_config():
    return {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": {str(t["id"]): {k: t[k] for k in ("content", "lstrip", "normalized", "rstrip",
                                                                   "single_word", "special")}
                                 for t in added_tokens()},
        "additional_special_tokens": [text for text, special in ADDED[1:14] if special],
        "bos_token": None,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 131072,
        "pad_token": "<|endoftext|>",
        "padding_side": "left",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }


def model_config():
    return {
        "architectures": ["Qwen3ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": EOS_ID,
        "eos_token_id": EOS_ID,
        "head_dim": HEAD_DIM,
        "hidden_act": "silu",
        "hidden_size": HIDDEN,
        "initializer_range": 0.02,
        "intermediate_size": INTERMEDIATE,
        "max_position_embeddings": MAX_POSITIONS,
        "max_window_layers": LAYERS,
        "model_type": "qwen3",
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "num_key_value_heads": KV_HEADS,
        "rms_norm_eps": 1e-06,
        "rope_scaling": None,
        "rope_theta": 1000000,
        "sliding_window": None,
        "tie_word_embeddings": True,
        "torch_dtype": "float32",
        # 4.57.3 to 4.99 make transformers 4.57.6 warn about a Mistral regex; Qwen3-Embedding's own stamp.
        "transformers_version": "4.51.3",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": VOCAB_SIZE,
    }


def seeded(name, shape, kind, scale):
    """float32 values from SHAKE-256(SEED + name): uniform with standard deviation `scale`
    ("linear", "embedding") or 1 + uniform(-0.1, 0.1) ("norm")."""
    n = int(np.prod(shape))
    raw = np.frombuffer(hashlib.shake_256(SEED + name.encode()).digest(4 * n), dtype="<u4")
    u = (raw.astype(np.float64) + 0.5) / 4294967296.0 * 2.0 - 1.0  # (-1, 1)
    if kind == "norm":
        values = 1.0 + 0.1 * u
    else:
        values = u * (scale * np.sqrt(3.0))
    return values.astype("<f4").reshape(shape)


def tensors():
    out = [("embed_tokens.weight", seeded("embed_tokens.weight", (VOCAB_SIZE, HIDDEN), "embedding", 1.0))]
    for i in range(LAYERS):
        p = f"layers.{i}."
        shapes = [
            ("input_layernorm.weight", (HIDDEN,), "norm", 0),
            ("self_attn.q_proj.weight", (HEADS * HEAD_DIM, HIDDEN), "linear", HIDDEN ** -0.5),
            ("self_attn.k_proj.weight", (KV_HEADS * HEAD_DIM, HIDDEN), "linear", HIDDEN ** -0.5),
            ("self_attn.v_proj.weight", (KV_HEADS * HEAD_DIM, HIDDEN), "linear", HIDDEN ** -0.5),
            ("self_attn.o_proj.weight", (HIDDEN, HEADS * HEAD_DIM), "linear", (HEADS * HEAD_DIM) ** -0.5),
            ("self_attn.q_norm.weight", (HEAD_DIM,), "norm", 0),
            ("self_attn.k_norm.weight", (HEAD_DIM,), "norm", 0),
            ("post_attention_layernorm.weight", (HIDDEN,), "norm", 0),
            ("mlp.gate_proj.weight", (INTERMEDIATE, HIDDEN), "linear", HIDDEN ** -0.5),
            ("mlp.up_proj.weight", (INTERMEDIATE, HIDDEN), "linear", HIDDEN ** -0.5),
            ("mlp.down_proj.weight", (HIDDEN, INTERMEDIATE), "linear", INTERMEDIATE ** -0.5),
        ]
        for name, shape, kind, scale in shapes:
            out.append((p + name, seeded(p + name, shape, kind, scale)))
    out.append(("norm.weight", seeded("norm.weight", (HIDDEN,), "norm", 0)))
    return sorted(out)


def write_safetensors(path, named):
    """The safetensors format: an 8-byte little-endian header length, a JSON header (names in
    order, data offsets), padded with spaces to 8 bytes, then the tensors' bytes."""
    header, offset, blobs = {}, 0, []
    for name, array in named:
        blob = array.tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape), "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def write_json(path, obj, indent=2):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(obj, f, ensure_ascii=False, indent=indent)
        f.write("\n")


def bytes_to_unicode():
    """GPT-2's byte-to-character map (the one byte-level BPE vocabularies are written in)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def check_tokenizer(llama_cpp_dir, out_dir, variant):
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer

    tok = Tokenizer.from_file(os.path.join(out_dir, "tokenizer.json"))
    base = os.path.join(llama_cpp_dir, "models", "ggml-vocab-qwen2.gguf")
    with open(base + ".inp", encoding="utf-8") as f:
        texts = f.read().split("\n__ggml_vocab_test__\n")
    with open(base + ".out", encoding="utf-8") as f:
        expected = f.read().split("\n")
    if texts and texts[-1] == "":
        texts.pop()
    if len(expected) > len(texts) and expected[-1] == "":
        expected.pop()
    if len(texts) != len(expected):
        sys.exit(f"test vectors: {len(texts)} texts, {len(expected)} answers")
    bad = 0
    for text, want in zip(texts, expected):
        got = tok.encode(text, add_special_tokens=False).ids
        if got != [int(x) for x in want.split()]:
            bad += 1
            print(f"tokenizer differs from llama.cpp's test vector for {text[:40]!r}", file=sys.stderr)
    if bad:
        sys.exit(f"{bad} of {len(texts)} test vectors differ")
    print(f"tokenizer: {len(texts)} of {len(texts)} llama.cpp test vectors for ggml-vocab-qwen2 reproduced")

    hf = AutoTokenizer.from_pretrained(out_dir)
    ids = hf("Hello world")["input_ids"]
    appends = ids[-1] == EOS_ID
    if appends != (variant == "eos"):
        sys.exit(f"transformers tokenises 'Hello world' as {ids}: EOS appended {appends}, variant {variant}")
    print(f"tokenizer: {type(hf).__name__}, 'Hello world' -> {ids}, padding side {hf.padding_side}")


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in ("eos", "noeos"):
        sys.exit(__doc__.split("\n\n")[1])
    llama_cpp_dir, out_dir, variant = sys.argv[1:]
    if os.path.exists(out_dir):
        sys.exit(f"{out_dir} exists")
    regular, merges = read_vocab(llama_cpp_dir)
    os.makedirs(os.path.join(out_dir, "1_Pooling"))
    os.makedirs(os.path.join(out_dir, "2_Normalize"))

    write_json(os.path.join(out_dir, "tokenizer.json"), tokenizer_json(regular, merges, variant))
    write_json(os.path.join(out_dir, "vocab.json"), {t: i for i, t in enumerate(regular)}, indent=None)
    with open(os.path.join(out_dir, "merges.txt"), "w", encoding="utf-8", newline="\n") as f:
        f.write("#version: 0.2\n")
        for m in merges:
            f.write(m + "\n")
    write_json(os.path.join(out_dir, "tokenizer_config.json"), tokenizer_config())
    write_json(os.path.join(out_dir, "config.json"), model_config())
    write_safetensors(os.path.join(out_dir, "model.safetensors"), tensors())
    write_json(os.path.join(out_dir, "modules.json"), [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ])
    write_json(os.path.join(out_dir, "sentence_bert_config.json"), {"max_seq_length": MAX_POSITIONS, "do_lower_case": False})
    write_json(os.path.join(out_dir, "config_sentence_transformers.json"), {
        "prompts": {"query": QUERY_PROMPT, "document": ""},
        "default_prompt_name": None,
        "similarity_fn_name": "cosine",
    })
    write_json(os.path.join(out_dir, "1_Pooling", "config.json"), {
        "word_embedding_dimension": HIDDEN,
        "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": False,
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
        "pooling_mode_weightedmean_tokens": False,
        "pooling_mode_lasttoken": True,
        "include_prompt": True,
    })
    eos_line = ("Its tokenizer appends `<|endoftext|>` (id 151643) to every text (a TemplateProcessing "
                "post-processor), as Qwen3-Embedding's does." if variant == "eos" else
                "Its tokenizer appends nothing (a ByteLevel post-processor), as Qwen3-Embedding's did when "
                "it was first published: last-token pooling then pools the text's own last token.")
    with open(os.path.join(out_dir, "README.md"), "w", encoding="utf-8", newline="\n") as f:
        f.write(
            "# qwen3-embedding-tiny" + ("" if variant == "eos" else "-noeos") + " (random weights, for tests)\n\n"
            "Qwen3-Embedding's architecture and tokenizer with random weights: Qwen3, hidden size 32, "
            "2 layers, 4 attention heads and 2 key-value heads of 32 dimensions, float32; last-token "
            "pooling, normalised, 32 dimensions; the query prompt of Qwen3-Embedding. Its vectors mean "
            "nothing; they only have to be the same on every correct server.\n\n" + eos_line + "\n\n"
            "Built by embedcheck's lab/install.sh qwen3tiny from llama.cpp's ggml-vocab-qwen2.gguf.\n")
    check_tokenizer(llama_cpp_dir, out_dir, variant)


if __name__ == "__main__":
    main()
