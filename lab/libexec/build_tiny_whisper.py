"""Builds the lab's tiny Whisper: transformers' WhisperForConditionalGeneration at tiny
sizes, seeded random weights, with Whisper's real multilingual tokenizer (51,865 ids,
the special tokens where whisper-tiny has them), converted from the `multilingual.tiktoken`
that the openai-whisper sdist ships.

Usage: build_tiny_whisper.py WHISPER_SDIST_DIR OUT_DIR

Why each choice (the speech servers' own constraints):
- feed-forward size 4 x d_model and float16-valued weights: whisper.cpp's converter goes
  through float16 and refuses other shapes; saved as float32, every value is exact in
  float16 too, so no engine rounds the weights differently;
- 3 decoder layers: whisper.cpp takes any 2-layer decoder for distil-whisper and turns
  timestamps off;
- wide logit margins and varied text: with the initial weights the best and the
  second-best token are about 1e-4 apart, so engines computing in float16 pick other
  tokens within a few steps, and greedy decoding repeats one token. The builder scales
  the decoder's token embedding (tied to the output projection), its positions, its
  feed-forward outputs and its cross-attention (what the audio contributes), and makes
  the special and timestamp tokens after <|endoftext|> unlikely, so that greedy decoding
  of two check clips is varied, differs between the clips, and keeps a top-2 margin of
  at least MIN_MARGIN over its first CHECKED_STEPS tokens; the build fails without that.

The same versions of torch and transformers give byte-identical files (the lab pins both
and checks the files' sha256).
"""

import ast
import base64
import json
import os
import sys

import numpy as np
import torch
from transformers import (
    GenerationConfig,
    WhisperConfig,
    WhisperFeatureExtractor,
    WhisperForConditionalGeneration,
    WhisperProcessor,
    WhisperTokenizer,
    WhisperTokenizerFast,
)
from transformers.models.gpt2.tokenization_gpt2 import bytes_to_unicode

SEED = 20261205
D_MODEL = 64
HEADS = 2
ENCODER_LAYERS = 2
DECODER_LAYERS = 3
NUM_LANGUAGES = 99  # whisper-tiny's: 51,865 ids in all
CHECKED_STEPS = 64
MIN_MARGIN = 0.05
# Factors on the initial weights (std 0.02), found by trying: token embedding, positions,
# feed-forward output, cross-attention output; and the factor on the rows of the tokens
# after <|endoftext|> (start, languages, tasks, timestamps), which no check clip chooses.
EMBEDDING, POSITIONS, FEED_FORWARD, CROSS_ATTENTION = 400.0, 400.0, 800.0, 240.0
SPECIAL_ROWS = 0.3


def languages(sdist):
    """Whisper's language codes in its order, read from the sdist's tokenizer.py."""
    source = open(os.path.join(sdist, "whisper", "tokenizer.py"), encoding="utf-8").read()
    start = source.index("LANGUAGES = {")
    end = source.index("}", start) + 1
    table = ast.literal_eval(source[start + len("LANGUAGES = ") : end])
    return list(table)[:NUM_LANGUAGES]


def tiktoken_ranks(sdist):
    path = os.path.join(sdist, "whisper", "assets", "multilingual.tiktoken")
    ranks = {}
    for line in open(path, encoding="ascii"):
        if line.strip():
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def bpe_parts(ranks, token, max_rank):
    """The two parts a token was merged from: byte-pair merges below its own rank."""
    parts = [bytes([b]) for b in token]
    while True:
        best = None
        for i, pair in enumerate(zip(parts[:-1], parts[1:])):
            rank = ranks.get(pair[0] + pair[1])
            if rank is not None and rank < max_rank and (best is None or rank < best[1]):
                best = (i, rank)
        if best is None:
            return parts
        i = best[0]
        parts = parts[:i] + [parts[i] + parts[i + 1]] + parts[i + 2 :]


def tokenizer_files(sdist, out):
    """vocab.json and merges.txt in GPT-2's byte-level form, from the tiktoken ranks."""
    ranks = tiktoken_ranks(sdist)
    byte_encoder = bytes_to_unicode()

    def text(b):
        return "".join(byte_encoder[c] for c in b)

    vocab, merges = {}, []
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        vocab[text(token)] = rank
        if len(token) > 1:
            parts = bpe_parts(ranks, token, rank)
            if len(parts) == 2:
                merges.append(f"{text(parts[0])} {text(parts[1])}")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "vocab.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(vocab, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    with open(os.path.join(out, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        f.writelines(m + "\n" for m in merges)
    return len(ranks)


def build_tokenizer(sdist, out):
    n_ranks = tokenizer_files(sdist, out)
    tokenizer = WhisperTokenizer(os.path.join(out, "vocab.json"), os.path.join(out, "merges.txt"))
    specials = ["<|endoftext|>", "<|startoftranscript|>"]
    specials += [f"<|{code}|>" for code in languages(sdist)]
    specials += [
        "<|translate|>",
        "<|transcribe|>",
        "<|startoflm|>",
        "<|startofprev|>",
        "<|nospeech|>",
        "<|notimestamps|>",
    ]
    tokenizer.add_tokens(specials, special_tokens=True)
    tokenizer.add_tokens([f"<|{i * 0.02:.2f}|>" for i in range(1501)], special_tokens=False)
    assert len(tokenizer) == 51865, len(tokenizer)
    assert tokenizer.convert_tokens_to_ids("<|endoftext|>") == n_ranks == 50257
    return tokenizer


def config():
    return WhisperConfig(
        vocab_size=51865,
        num_mel_bins=80,
        d_model=D_MODEL,
        encoder_layers=ENCODER_LAYERS,
        encoder_attention_heads=HEADS,
        decoder_layers=DECODER_LAYERS,
        decoder_attention_heads=HEADS,
        encoder_ffn_dim=4 * D_MODEL,
        decoder_ffn_dim=4 * D_MODEL,
        max_source_positions=1500,
        max_target_positions=448,
        bos_token_id=50257,
        eos_token_id=50257,
        pad_token_id=50257,
        decoder_start_token_id=50258,
        begin_suppress_tokens=[220, 50257],
        suppress_tokens=[],
    )


def generation_config(tokenizer):
    ids = tokenizer.convert_tokens_to_ids
    codes = [t for t in tokenizer.additional_special_tokens if len(t) <= 9 and t[2:-2].isalpha()]
    return GenerationConfig(
        decoder_start_token_id=50258,
        bos_token_id=50257,
        eos_token_id=50257,
        pad_token_id=50257,
        max_length=448,
        begin_suppress_tokens=[220, 50257],
        suppress_tokens=[],
        is_multilingual=True,
        lang_to_id={t: ids(t) for t in codes if t not in ("<|translate|>", "<|transcribe|>")},
        task_to_id={"transcribe": ids("<|transcribe|>"), "translate": ids("<|translate|>")},
        no_timestamps_token_id=ids("<|notimestamps|>"),
        prev_sot_token_id=ids("<|startofprev|>"),
        max_initial_timestamp_index=50,
        alignment_heads=[[DECODER_LAYERS - 1, 0]],
    )


def check_clips(extractor):
    """Two deterministic clips: 3 s of a voiced, gliding tone and 1 s of silence."""
    rate = 16000
    t = np.arange(3 * rate) / rate
    pitch = 120 + 40 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(pitch) / rate
    voiced = sum(np.sin(k * phase) / k for k in range(1, 8)) * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t))
    clips = [0.3 * voiced / np.max(np.abs(voiced)), np.zeros(rate)]
    return [
        torch.tensor(extractor(c.astype(np.float32), sampling_rate=rate).input_features)
        for c in clips
    ]


def greedy_margins(model, features, prompt):
    """The top-2 logit margin at each of the first CHECKED_STEPS greedy steps, and the
    tokens chosen (the lab's known answers decode the same plain way)."""
    tokens = list(prompt)
    margins = []
    with torch.no_grad():
        encoded = model.model.encoder(features).last_hidden_state
        for _ in range(CHECKED_STEPS):
            out = model.model.decoder(
                input_ids=torch.tensor([tokens]), encoder_hidden_states=encoded
            ).last_hidden_state
            logits = model.proj_out(out[0, -1])
            top = torch.topk(logits, 2)
            margins.append(float(top.values[0] - top.values[1]))
            tokens.append(int(top.indices[0]))
            if tokens[-1] == 50257:
                break
    return margins, tokens[len(prompt) :]


def build_model():
    torch.manual_seed(SEED)
    model = WhisperForConditionalGeneration(config())
    decoder = model.model.decoder
    with torch.no_grad():
        decoder.embed_tokens.weight.mul_(EMBEDDING)
        decoder.embed_tokens.weight[50258:].mul_(SPECIAL_ROWS)
        decoder.embed_positions.weight.mul_(POSITIONS)
        for layer in decoder.layers:
            layer.fc2.weight.mul_(FEED_FORWARD)
            layer.fc2.bias.mul_(FEED_FORWARD)
            layer.encoder_attn.out_proj.weight.mul_(CROSS_ATTENTION)
        for p in model.parameters():
            p.copy_(p.half().float())
    model.eval()
    return model


def main():
    sdist, out = sys.argv[1], sys.argv[2]
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    tokenizer = build_tokenizer(sdist, out)
    extractor = WhisperFeatureExtractor(feature_size=80)
    prompt = tokenizer.convert_tokens_to_ids(
        ["<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>"]
    )
    clips = check_clips(extractor)
    model = build_model()
    (voiced_margins, voiced), (silent_margins, silent) = [
        greedy_margins(model, c, prompt) for c in clips
    ]
    least = min(voiced_margins + silent_margins)
    distinct = min(len(set(voiced)), len(set(silent)))
    differing = sum(a != b for a, b in zip(voiced, silent))
    print(
        f"tiny whisper: least top-2 margin {least:.4f} over {CHECKED_STEPS} steps, "
        f"{distinct} distinct tokens, the clips differ at {differing} steps",
        file=sys.stderr,
    )
    if least < MIN_MARGIN or distinct < 8 or differing == 0:
        sys.exit("tiny whisper: the weights give no wide margins or no varied text; not saved")
    model.generation_config = generation_config(tokenizer)
    model.save_pretrained(out, safe_serialization=True)
    WhisperProcessor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(out)
    WhisperTokenizerFast.from_pretrained(out).save_pretrained(out, legacy_format=False)
    # The record holds what decides the files, the seed; the margin is a measurement of
    # this CPU's arithmetic (0.1727 on one machine, 0.1728 on another, with byte-identical
    # weights), printed above and checked, never written into the pinned files.
    with open(os.path.join(out, "embedcheck-build.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps({"seed": SEED}) + "\n")


if __name__ == "__main__":
    main()
