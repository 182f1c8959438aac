"""Writes known answers for speech-to-text: what the model's own library (transformers'
WhisperForConditionalGeneration, float32, on CPU) transcribes each clip to, decoding with a
plain greedy loop, as JSON Lines on standard output.

Usage: python lab/speech_reference.py MODEL_DIR --name SERVED_NAME CLIP.wav... > FILE

A plain loop and not generate(): generate()'s Whisper logic adds its own rules (it ran 693
tokens on a silent clip). Each clip is decoded in two modes, from the prompt
<|startoftranscript|><|en|><|transcribe|> followed by <|notimestamps|> (as vLLM decodes json
and text) and without it (timestamp mode, as whisper.cpp and faster-whisper decode), taking the
top token each step until <|endoftext|> or the decoder's last position, no token suppressed.
The same request to a server is sent with language "en" and temperature 0.

Line 1 is a header (model, library versions, language, temperature, the prompts, the sha256 of
model.safetensors); then one line per clip and mode:
{"id", "clip", "sha256", "seconds", "mode", "prompt", "text", "tokens", "ended", "margins"}:
"clip" is the file name the suite uploads the clip under, "sha256" the WAV's digest (the suite
judges a case only when its own clip has that digest), "text" the tokens decoded without
special tokens, "tokens" the ids chosen after the prompt (<|endoftext|> excluded), "ended"
whether the loop stopped at <|endoftext|>, "margins" the top-2 logit margin at each step
(for people: where two engines may part).
Imports only torch, transformers, numpy and the standard library.
"""

import argparse
import hashlib
import json
import os
import sys
import wave

import numpy as np
import torch
import transformers
from transformers import WhisperFeatureExtractor, WhisperForConditionalGeneration, WhisperTokenizer

PROMPTS = {
    "notimestamps": ["<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>"],
    "timestamps": ["<|startoftranscript|>", "<|en|>", "<|transcribe|>"],
}


def read_wav(path):
    """A 16 kHz mono 16-bit WAV as float samples in [-1, 1)."""
    with wave.open(path, "rb") as w:
        if w.getframerate() != 16000 or w.getnchannels() != 1 or w.getsampwidth() != 2:
            sys.exit(f"{path}: the known answers take 16 kHz mono 16-bit WAV clips")
        frames = w.readframes(w.getnframes())
    return np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768.0


def greedy(model, features, prompt, limit):
    """The library's greedy tokens and each step's float32 logits."""
    tokens = list(prompt)
    steps = []
    with torch.no_grad():
        encoded = model.model.encoder(features).last_hidden_state
        while len(tokens) < limit:
            out = model.model.decoder(
                input_ids=torch.tensor([tokens]), encoder_hidden_states=encoded
            ).last_hidden_state
            logits = model.proj_out(out[0, -1])
            steps.append(logits)
            tokens.append(int(torch.argmax(logits)))
            if tokens[-1] == model.config.eos_token_id:
                break
    return tokens[len(prompt) :], steps


def known_answer(model, tokenizer, extractor, path, mode):
    samples = read_wav(path)
    features = torch.tensor(extractor(samples, sampling_rate=16000).input_features)
    prompt = tokenizer.convert_tokens_to_ids(PROMPTS[mode])
    chosen, steps = greedy(model, features, prompt, model.config.max_target_positions)
    margins = []
    for logits in steps:
        top = torch.topk(logits, 2).values
        margins.append(round(float(top[0] - top[1]), 4))
    eos = model.config.eos_token_id
    text_tokens = [t for t in chosen if t != eos]
    raw = open(path, "rb").read()
    name = os.path.basename(path)
    return {
        "id": f"{os.path.splitext(name)[0]}-{mode}",
        "clip": name,
        "sha256": hashlib.sha256(raw).hexdigest(),
        "seconds": round(len(samples) / 16000, 3),
        "mode": mode,
        "text": tokenizer.decode(text_tokens, skip_special_tokens=True),
        "tokens": text_tokens,
        "ended": chosen[-1] == eos,
        "margins": margins,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir")
    parser.add_argument("--name", required=True)
    parser.add_argument("clips", nargs="+")
    args = parser.parse_args()
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    model = WhisperForConditionalGeneration.from_pretrained(args.model_dir).eval()
    tokenizer = WhisperTokenizer.from_pretrained(args.model_dir)
    extractor = WhisperFeatureExtractor.from_pretrained(args.model_dir)
    weights = open(os.path.join(args.model_dir, "model.safetensors"), "rb").read()
    header = {
        "kind": "speech",
        "model": args.name,
        "library": "transformers",
        "version": transformers.__version__,
        "torch": torch.__version__.split("+")[0],
        "decoding": "greedy",
        "language": "en",
        "temperature": 0,
        "prompts": PROMPTS,
        "safetensors_sha256": hashlib.sha256(weights).hexdigest(),
    }
    print(json.dumps(header, ensure_ascii=False))
    for path in args.clips:
        for mode in PROMPTS:
            case = known_answer(model, tokenizer, extractor, path, mode)
            print(json.dumps(case, ensure_ascii=False))


if __name__ == "__main__":
    main()
