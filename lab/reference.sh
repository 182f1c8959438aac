#!/usr/bin/env bash
# Writes reference vectors (lab/reference.py) with the infinity venv's sentence-transformers,
# offline, to standard output.
# Usage: lab/reference.sh [MODEL | MODEL_DIR] [reference.py options] > FILE
#   MODEL: one of the lab's models (minilm, qwen3tiny, qwen3tiny-noeos), named as the servers
#   serve it; nothing: minilm. e.g.
#   lab/reference.sh > fixtures/reference/all-MiniLM-L6-v2.jsonl
#   lab/reference.sh qwen3tiny > fixtures/reference/qwen3-embedding-tiny.jsonl
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -f "$(venv_dir infinity)/.lab-installed" ] || die "sentence-transformers comes from the infinity venv: run lab/install.sh infinity"
if [ "$#" -eq 0 ] || [[ "$1" == -* ]]; then
  set -- minilm "$@"
fi
if use_model "$1"; then
  [ -f "$MODEL_MARKER" ] || die "the model $1 is not installed: run lab/install.sh $MODEL_PIECE"
  shift
  set -- "$MODEL_DIR" --name "$MODEL_NAME" "$@"
fi
export_server_env
exec "$(venv_dir infinity)/bin/python" "$LAB_DIR/reference.py" "$@"
