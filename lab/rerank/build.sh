#!/usr/bin/env bash
# Builds the tiny cross-encoders (lab/rerank/build_models.py) into the lab state dir, twice,
# checks that the two builds are byte-identical, and prints the sha256 of every file.
# Usage: lab/rerank/build.sh
#   Needs lab/install.sh model infinity (the tokenizer files and a venv with transformers).
#   Writes STATE/model/tiny-rerank-bert and STATE/model/tiny-rerank-roberta.
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

[ -f "$(venv_dir infinity)/.lab-installed" ] || die "transformers comes from the infinity venv: run lab/install.sh infinity"
[ -f "$STATE_DIR/model/.lab-installed" ] || die "the tokenizer comes from the lab model: run lab/install.sh model"
export_server_env
py="$(venv_dir infinity)/bin/python"
script="$LAB_DIR/rerank/build_models.py"
out="$STATE_DIR/model"
check="$(mktemp -d)"
trap 'rm -rf "$check"' EXIT

log "rerank: building tiny-rerank-bert and tiny-rerank-roberta in $out"
run_nice "$py" "$script" "$MODEL_DIR" "$out" >"$check/first.sha256"
log "rerank: building them again in a scratch dir to check determinism"
run_nice "$py" "$script" "$MODEL_DIR" "$check/again" >"$check/second.sha256"
if ! diff "$check/first.sha256" "$check/second.sha256" >&2; then
  die "rerank: the two builds differ"
fi
cat "$check/first.sha256"
log "rerank: two builds byte-identical"
