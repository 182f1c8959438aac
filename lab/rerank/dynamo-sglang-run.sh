#!/usr/bin/env bash
# Runs NVIDIA Dynamo's rerank path on loopback, on CPU: one SGLang cross-encoder rerank worker
# (python -m dynamo.sglang --rerank-worker) and the HTTP frontend, with file-based discovery in
# a fresh directory. lab/rerank/serve.sh dynamo-sglang runs it; lab/stop.sh rerank-dynamo-sglang
# ends it with SIGTERM to the whole process group.
# Usage: lab/rerank/dynamo-sglang-run.sh PORT MODEL_DIR SERVED_NAME
# Needs a venv STATE/venvs/sglang with sglang (PyPI, CUDA build, run with --device cpu),
# ai-dynamo and ai-dynamo-runtime installed with --no-deps (see lab/rerank/README.md).
# SGLang worker options, all needed on this CPU machine:
#   --device cpu --attention-backend torch_native: no CUDA, no Triton;
#   --max-total-tokens 65536: otherwise SGLang sizes its KV cache to most of RAM (12 GB here);
#   --mem-fraction-static 0.5: without it the Dynamo worker computed -0.049 and refused to start
#     ("Loaded weights leave no GPU memory for the KV cache");
#   --disable-radix-cache: with prefix caching, a second pair with the same query crashes the
#     BERT model (token_type_ids not cut to the uncached tokens: "size of tensor a (18) must
#     match the size of tensor b (19)", sglang/srt/models/bert.py line 73);
#   --chunked-prefill-size -1: a batch over the 4096-token chunk crashes it the same way.
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

port="$1" model_dir="$2" served="$3"
venv="$(venv_dir sglang)"
export_server_env
mkdir -p "$RUN_DIR"
kv="$(mktemp -d "$RUN_DIR/dynamo-kv.XXXXXX")"
export DYN_DISCOVERY_BACKEND=file DYN_FILE_KV="$kv" DYN_REQUEST_PLANE=tcp DYN_EVENT_PLANE=zmq
export DYN_TCP_RPC_HOST=127.0.0.1 DYN_TCP_RESPONSE_STREAM_HOST=127.0.0.1
export DYN_EVENT_PLANE_HOST=127.0.0.1 DYN_SYSTEM_HOST=127.0.0.1 DYN_SYSTEM_PORT=-1
export SGLANG_HOST_IP=127.0.0.1

pids=()
# shellcheck disable=SC2317  # invoked by the traps below
cleanup() {
  trap - TERM INT EXIT
  kill -TERM "${pids[@]}" 2>/dev/null || true
  wait || true
  rm -rf "$kv"
}
trap 'cleanup; exit 143' TERM INT
trap cleanup EXIT

echo "[dynamo-sglang-run] worker: dynamo.sglang --rerank-worker (file KV $kv)"
"$venv/bin/python" -m dynamo.sglang --model-path "$model_dir" --served-model-name "$served" \
  --rerank-worker --device cpu --attention-backend torch_native --dtype float32 \
  --max-total-tokens 65536 --mem-fraction-static 0.5 --disable-radix-cache --chunked-prefill-size -1 &
pids+=("$!")
echo "[dynamo-sglang-run] frontend: dynamo.frontend on 127.0.0.1:$port"
"$venv/bin/python" -m dynamo.frontend --http-host 127.0.0.1 --http-port "$port" &
pids+=("$!")
set +e
wait -n
status=$?
echo "[dynamo-sglang-run] a process exited with status $status; stopping the other" >&2
exit "$status"
