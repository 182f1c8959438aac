#!/usr/bin/env bash
# Runs NVIDIA Dynamo on loopback: one vLLM embedding worker and the HTTP frontend, with
# file-based discovery in a fresh directory. lab/start.sh runs this in its own session;
# lab/stop.sh ends it with SIGTERM to the whole process group.
# Usage: lab/libexec/dynamo-run.sh PORT [MODEL]   (MODEL: one of lib.sh's LAB_MODELS, default minilm)
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

port="$1"
use_model "${2:-minilm}" || { echo "[dynamo-run] unknown model '${2:-}'" >&2; exit 2; }
venv="$(venv_dir dynamo)"
export_server_env
mkdir -p "$RUN_DIR"
kv="$(mktemp -d "$RUN_DIR/dynamo-kv.XXXXXX")"
export DYN_DISCOVERY_BACKEND=file DYN_FILE_KV="$kv" DYN_REQUEST_PLANE=tcp DYN_EVENT_PLANE=zmq
export DYN_TCP_RPC_HOST=127.0.0.1 DYN_TCP_RESPONSE_STREAM_HOST=127.0.0.1
export DYN_EVENT_PLANE_HOST=127.0.0.1 DYN_SYSTEM_HOST=127.0.0.1 DYN_SYSTEM_PORT=-1
export VLLM_HOST_IP=127.0.0.1 VLLM_CPU_KVCACHE_SPACE=1

pids=()
# shellcheck disable=SC2317,SC2329  # invoked by the traps below
cleanup() {
  trap - TERM INT EXIT
  kill -TERM "${pids[@]}" 2>/dev/null || true
  wait || true
  rm -rf "$kv"
}
trap 'cleanup; exit 143' TERM INT
trap cleanup EXIT

echo "[dynamo-run] worker: dynamo.vllm (file KV $kv)"
"$venv/bin/python" -m dynamo.vllm --model "$MODEL_DIR" --served-model-name "$MODEL_NAME" \
  --embedding-worker --runner pooling --dtype float32 --max-model-len "$MODEL_MAX_LEN" &
pids+=("$!")
echo "[dynamo-run] frontend: dynamo.frontend on 127.0.0.1:$port"
"$venv/bin/python" -m dynamo.frontend --http-host 127.0.0.1 --http-port "$port" &
pids+=("$!")
set +e
wait -n
rc=$?
set -e
echo "[dynamo-run] a process exited with status $rc; stopping the other"
exit "$rc"
