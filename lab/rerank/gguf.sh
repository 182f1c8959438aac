#!/usr/bin/env bash
# Converts the tiny cross-encoders to GGUF (f32) for llama-server, with the
# convert_hf_to_gguf.py vendored in the llama-cpp-python sdist (as install.sh does for the
# embedding model), and prints their sha256.
# Usage: lab/rerank/gguf.sh
#   Needs lab/rerank/build.sh and the sdist (lab/install.sh llamacpp or llamaserver fetches it).
#   Writes STATE/model/tiny-rerank-bert-f32.gguf and STATE/model/tiny-rerank-roberta-f32.gguf.
# The RoBERTa model is converted from a copy without tokenizer.json: with one,
# convert_hf_to_gguf.py's RobertaModel.set_vocab reads a BPE (gpt2) tokenizer, which this
# WordPiece tokenizer is not; without it, BERT's WordPiece path is taken and the separators
# come from tokenizer_config.json (see build_models.py).
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

src="$DL_DIR/llamacpp/src/llama_cpp_python-$LLAMACPP_VERSION/vendor/llama.cpp"
[ -f "$src/convert_hf_to_gguf.py" ] || die "no $src/convert_hf_to_gguf.py: run lab/install.sh llamaserver first"
# The gguf-convert venv (install.sh) if there is one, else the infinity venv: both have torch,
# transformers, numpy and safetensors, all the BERT path needs.
py="$(venv_dir gguf-convert)/bin/python"
[ -x "$py" ] || py="$(venv_dir infinity)/bin/python"
[ -x "$py" ] || die "no Python with transformers: run lab/install.sh infinity"
export_server_env
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT

for arch in bert roberta; do
  dir="$STATE_DIR/model/tiny-rerank-$arch"
  [ -f "$dir/model.safetensors" ] || die "no $dir: run lab/rerank/build.sh"
  out="$STATE_DIR/model/tiny-rerank-$arch-f32.gguf"
  mkdir -p "$stage/$arch"
  for f in config.json model.safetensors special_tokens_map.json tokenizer_config.json vocab.txt; do
    cp "$dir/$f" "$stage/$arch/"
  done
  [ "$arch" = roberta ] || cp "$dir/tokenizer.json" "$stage/$arch/"
  log "rerank: converting tiny-rerank-$arch to $out"
  PYTHONPATH="$src/gguf-py" run_nice "$py" "$src/convert_hf_to_gguf.py" "$stage/$arch" \
    --outtype f32 --outfile "$out.tmp" >"$stage/$arch.log" 2>&1 || { tail -n 30 "$stage/$arch.log" >&2; die "conversion failed"; }
  grep -E 'special token|add_(bos|eos|sep)' "$stage/$arch.log" >&2 || true
  mv "$out.tmp" "$out"
  (cd "$STATE_DIR/model" && sha256sum "$(basename "$out")")
done
