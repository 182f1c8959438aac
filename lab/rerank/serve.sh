#!/usr/bin/env bash
# Starts one lab server with a tiny cross-encoder (lab/rerank/build.sh) on 127.0.0.1:PORT, in
# a process group of its own (setsid), with a PID file (STATE/run/rerank-NAME.pid) and a log
# (STATE/logs/rerank-NAME.log), waits until it serves, and prints its base URL, the seconds
# it took and its RSS. Stop it with: lab/stop.sh rerank-NAME
# Usage: lab/rerank/serve.sh NAME [PORT]
#   NAME: vllm-bert | vllm-roberta | infinity-bert | infinity-roberta | infinity-bert-root
#         | llamaserver-roberta | llamaserver-bert | litserve-bert | litellm
#         | sglang-bert | dynamo-sglang-bert (a venv STATE/venvs/sglang: see lab/rerank/README.md)
#         | tei-bert (TEI 1.9.3, built by lab/rerank/tei-build.sh)
#   infinity-*: --url-prefix /v1 (routes under /v1); infinity-bert-root: no prefix.
#   litellm: LITELLM_BACKEND_PORT (the backend's port), LITELLM_BACKEND_PROVIDER
#            (hosted_vllm | infinity, default hosted_vllm), LITELLM_BACKEND_MODEL (default
#            embedcheck/tiny-rerank-bert); the key clients send is lab/lib.sh's master key.
#   EXTRA_ARGS (words) are appended to the server's command.
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

[ "$#" -ge 1 ] || die "usage: $0 NAME [PORT]"
name="$1"
default_rerank_port() {
  case "$1" in
    infinity-bert) echo 18201 ;;
    vllm-bert) echo 18202 ;;
    llamaserver-roberta) echo 18203 ;;
    llamaserver-bert) echo 18204 ;;
    litellm) echo 18205 ;;
    litserve-bert) echo 18206 ;;
    infinity-bert-root) echo 18207 ;;
    infinity-roberta) echo 18208 ;;
    vllm-roberta) echo 18209 ;;
    dynamo-sglang-bert) echo 18210 ;;
    sglang-bert) echo 18211 ;;
    tei-bert) echo 18212 ;;
    *) return 1 ;;
  esac
}
port="${2:-$(default_rerank_port "$name" || true)}"
[ -n "$port" ] || die "unknown NAME '$name'"
server="rerank-$name"
if running_pgid "$server" >/dev/null; then die "$server is already running; lab/stop.sh $server"; fi
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then die "127.0.0.1:$port is already in use"; fi

arch="${name##*-}"
[ "$name" = infinity-bert-root ] && arch=bert
[ "$name" = litellm ] && arch=bert
mdir="$STATE_DIR/model/tiny-rerank-$arch"
served="embedcheck/tiny-rerank-$arch"
[ -f "$mdir/model.safetensors" ] || die "no $mdir: run lab/rerank/build.sh"
export_server_env
mkdir -p "$RUN_DIR" "$LOG_DIR"
base="http://127.0.0.1:$port"
ready_path=/health
ready_grep=""
auth=()
# shellcheck disable=SC2206
extra=(${EXTRA_ARGS:-})

case "$name" in
  vllm-*)
    export VLLM_HOST_IP=127.0.0.1 VLLM_CPU_KVCACHE_SPACE=1
    cmd=("$(venv_dir vllm)/bin/vllm" serve "$mdir" --runner pooling --dtype float32 --max-model-len 512
      --served-model-name "$served" --host 127.0.0.1 --port "$port")
    ready_path=/v1/models ready_grep="$served"
    ;;
  infinity-bert-root)
    cmd=("$(venv_dir infinity)/bin/infinity_emb" v2 --model-id "$mdir" --served-model-name "$served"
      --engine torch --device cpu --host 127.0.0.1 --port "$port")
    ready_path=/models ready_grep="$served"
    ;;
  infinity-*)
    cmd=("$(venv_dir infinity)/bin/infinity_emb" v2 --model-id "$mdir" --served-model-name "$served"
      --engine torch --device cpu --url-prefix /v1 --host 127.0.0.1 --port "$port")
    ready_path=/v1/models ready_grep="$served"
    ;;
  llamaserver-*)
    [ -x "$LLAMASERVER_BIN" ] || die "no $LLAMASERVER_BIN: lab/install.sh llamaserver"
    gguf="$STATE_DIR/model/tiny-rerank-$arch-f32.gguf"
    [ -s "$gguf" ] || die "no $gguf: run lab/rerank/gguf.sh"
    cmd=("$LLAMASERVER_BIN" --model "$gguf" --alias "$served" --reranking -c 512 -b 512 -ub 512
      --host 127.0.0.1 --port "$port")
    ;;
  litserve-*)
    cmd=("$(venv_dir litserve)/bin/python" "$LAB_DIR/libexec/litserve_rerank.py" "$mdir" "$port" "$served")
    ;;
  sglang-*)
    # The options are explained in dynamo-sglang-run.sh. Without --chunked-prefill-size -1
    # (with it this server hung on its first request until SGLang's 300 s watchdog ended it):
    # a request over 4096 tokens (e.g. 1000 short documents) kills it.
    cmd=("$(venv_dir sglang)/bin/python" -m sglang.launch_server --model-path "$mdir" --served-model-name "$served"
      --is-embedding --device cpu --attention-backend torch_native --dtype float32 --max-total-tokens 65536
      --disable-radix-cache --host 127.0.0.1 --port "$port")
    ;;
  dynamo-sglang-*)
    cmd=("$LAB_DIR/rerank/dynamo-sglang-run.sh" "$port" "$mdir" "$served")
    ready_path=/v1/models ready_grep="$served"
    ;;
  tei-*)
    tei="$STATE_DIR/tei/bin/text-embeddings-router"
    [ -x "$tei" ] || die "no $tei: run lab/rerank/tei-build.sh"
    cmd=("$tei" --model-id "$mdir" --hostname 127.0.0.1 --port "$port")
    ;;
  litellm)
    venv="$(venv_dir litellm)"
    check_litellm_site "$venv"
    backend_port="${LITELLM_BACKEND_PORT:?set LITELLM_BACKEND_PORT to the port of the backend}"
    provider="${LITELLM_BACKEND_PROVIDER:-hosted_vllm}"
    backend_model="${LITELLM_BACKEND_MODEL:-$served}"
    LITELLM_MASTER_KEY="$(litellm_master_key)"
    export LITELLM_MASTER_KEY LITELLM_LOCAL_MODEL_COST_MAP=True LITELLM_TELEMETRY=False
    conf="$STATE_DIR/litellm/rerank-config-$port.yaml"
    mkdir -p "$(dirname "$conf")"
    cat >"$conf" <<YAML
model_list:
  - model_name: $backend_model
    litellm_params:
      model: $provider/$backend_model
      api_base: http://127.0.0.1:$backend_port/v1
      api_key: none
    model_info:
      mode: rerank
YAML
    cmd=("$venv/bin/litellm" --config "$conf" --host 127.0.0.1 --port "$port" --telemetry False)
    ready_path=/health/liveliness
    ;;
  *) die "unknown NAME '$name'" ;;
esac
cmd+=("${extra[@]}")

logf="$LOG_DIR/$server.log"
[ -f "$logf" ] && mv -f "$logf" "$logf.1"
log "starting $server on 127.0.0.1:$port (log: $logf): ${cmd[*]}"
t0=$SECONDS
setsid "${cmd[@]}" >"$logf" 2>&1 </dev/null &
pid=$!
pgid="$(ps -o pgid= -p "$pid" | tr -d ' ')"
echo "$pid $pgid $(proc_starttime "$pid")" >"$(pid_file "$server")"
echo "$port" >"$(port_file "$server")"

serves() {
  local body
  body="$(curl_local -f --max-time 5 "${auth[@]}" "$base$ready_path" 2>/dev/null)" || return 1
  [ -z "$ready_grep" ] || grep -qF "\"$ready_grep\"" <<<"$body" || return 1
  case "$name" in
    litserve-*)
      # /health is 200 once the worker has loaded the model; then one rerank must come back.
      curl_local -f --max-time 30 -H 'Content-Type: application/json' \
        -d '{"query":"q","documents":["d"]}' "$base/v1/rerank" 2>/dev/null | grep -qF relevance_score
      ;;
  esac
}
while ! serves; do
  if ! kill -0 "$pid" 2>/dev/null; then
    tail -n 40 "$logf" >&2 || true
    rm -f "$(pid_file "$server")" "$(port_file "$server")"
    die "$server exited before it served (log: $logf)"
  fi
  if [ $((SECONDS - t0)) -ge "${EMBEDCHECK_LAB_START_TIMEOUT:-600}" ]; then
    tail -n 40 "$logf" >&2 || true
    "$LAB_DIR/stop.sh" "$server" >&2 || true
    die "$server did not serve in time"
  fi
  sleep 1
done
ready=$((SECONDS - t0))
echo "$ready" >"$RUN_DIR/$server.ready_s"
log "$server serves after $ready s; RSS $(($(group_rss_kib "$pgid") / 1024)) MiB (process group $pgid)"
echo "$base"
