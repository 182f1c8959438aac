#!/usr/bin/env bash
# Audits every running lab server with the suite, and the interesting pairs as
# migrations (with --load), writing full reports under lab/reports/ (not checked in) and a normalised
# summary of each real server's verdicts under lab/summary/ (checked in, so a change of
# verdict on a real server shows in review).
#
#   lab/audit.sh            # every running server, then the pairs whose both servers run
#   lab/audit.sh infinity   # one server (or a variant: lab/audit.sh vllm-cls)
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REPO_DIR="$(cd "$LAB_DIR/.." && pwd)"
REPORTS_DIR="$LAB_DIR/reports"
SUMMARY_DIR="$LAB_DIR/summary"
SEED=7
# Pairs worth a migration audit: baseline:candidate.
# infinity:portkey is the gateway against its own backend.
PAIRS=(infinity:dynamo vllm:dynamo litserve:dynamo infinity:portkey)

running() { running_pgid "$1" >/dev/null; }

# What a server needs beyond its URL: LiteLLM its key, LitServe the model (it serves no
# GET /v1/models).
key_options() {
  if [[ "$1" == litellm ]]; then echo "--api-key-env LITELLM_MASTER_KEY"; fi
  if [[ "$1" == litserve ]]; then echo "--model $MODEL_NAME"; fi
}

baseline_options() {
  if [[ "$1" == litserve ]]; then echo "--baseline-model $MODEL_NAME"; fi
}

REFERENCE="$REPO_DIR/fixtures/reference/all-MiniLM-L6-v2.jsonl"

audit_one() {
  local server="$1" port
  port="$(cat "$(port_file "$server")")"
  if [[ "$server" == litellm ]]; then
    LITELLM_MASTER_KEY="$(litellm_master_key)"
    export LITELLM_MASTER_KEY
  fi
  # shellcheck disable=SC2046
  (cd "$REPO_DIR" && cargo test --quiet --test conformance -- \
    --endpoint "http://127.0.0.1:$port/v1" --label "$server" --seed "$SEED" --timeout 30 \
    --reference "$REFERENCE" $(key_options "$server") --report-dir "$REPORTS_DIR/$server") \
    >"$REPORTS_DIR/$server.log" 2>&1 || true
  if [[ -f "$REPORTS_DIR/$server/report.json" ]]; then
    python3 "$LAB_DIR/summarise.py" "$REPORTS_DIR/$server/report.json" "$(version_of "$server")" \
      >"$SUMMARY_DIR/$server.txt"
  fi
  log "$server: $(grep -m1 '^embedcheck: [0-9]* clauses' "$REPORTS_DIR/$server.log" || echo 'no report')"
}

audit_pair() {
  local baseline="$1" candidate="$2"
  local dir="$REPORTS_DIR/$baseline-to-$candidate"
  # shellcheck disable=SC2046
  (cd "$REPO_DIR" && cargo test --quiet --test conformance -- \
    --endpoint "http://127.0.0.1:$(default_port "$candidate")/v1" --label "$candidate" \
    --baseline "http://127.0.0.1:$(default_port "$baseline")/v1" --baseline-label "$baseline" \
    $(baseline_options "$baseline") --seed "$SEED" --timeout 30 --load --report-dir "$dir") \
    >"$dir.log" 2>&1 || true
  log "$baseline → $candidate: $(grep -m1 '^migration:' "$dir.log" || echo 'no report')"
}

mkdir -p "$REPORTS_DIR" "$SUMMARY_DIR"
servers=("$@")
if [[ ${#servers[@]} -eq 0 ]]; then
  servers=("${ALL_SERVERS[@]}")
fi
for server in "${servers[@]}"; do
  if running "$server"; then audit_one "$server"; else log "$server is not running; skipped"; fi
done
if [[ $# -eq 0 ]]; then
  for pair in "${PAIRS[@]}"; do
    baseline="${pair%%:*}" candidate="${pair##*:}"
    if running "$baseline" && running "$candidate"; then audit_pair "$baseline" "$candidate"; fi
  done
fi
