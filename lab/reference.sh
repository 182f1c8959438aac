#!/usr/bin/env bash
# Writes reference vectors (lab/reference.py) with the infinity venv's sentence-transformers,
# offline, to standard output.
# Usage: lab/reference.sh [MODEL_DIR [reference.py options]] > FILE
#   Without MODEL_DIR: the lab's model, named as the servers serve it.
#   e.g. lab/reference.sh > fixtures/reference/all-MiniLM-L6-v2.jsonl
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -f "$(venv_dir infinity)/.lab-installed" ] || die "sentence-transformers comes from the infinity venv: run lab/install.sh infinity"
if [ "$#" -eq 0 ]; then
  [ -f "$STATE_DIR/model/.lab-installed" ] || die "the model is not installed: run lab/install.sh model"
  set -- "$MODEL_DIR" --name "$MODEL_NAME"
fi
export_server_env
exec "$(venv_dir infinity)/bin/python" "$LAB_DIR/reference.py" "$@"
