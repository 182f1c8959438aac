#!/usr/bin/env bash
# Starts one server on 127.0.0.1:PORT in its own session, with a PID file and a log in the
# state dir, waits until it serves, and prints its base URL.
# Usage: lab/start.sh SERVER[+MODEL] [PORT] [MODEL]
#   SERVER: infinity | vllm | dynamo | llamacpp | litellm | llamaserver | litserve | portkey |
#           fwserver (faster-whisper-server) | whispercpp (whisper.cpp's whisper-server), both
#           speech only (fwserver+whispertiny, whispercpp+whispertiny), or a
#           misconfigured variant (base server's command plus variant_args in lib.sh):
#           vllm-cls | vllm-matryoshka | llamaserver-cls | llamaserver-last | llamaserver-mean
#   MODEL:  minilm (the default: all-MiniLM-L6-v2) | qwen3tiny | qwen3tiny-noeos (lab/install.sh
#           qwen3tiny) | whispertiny (speech-to-text; lab/install.sh whispertiny); the instance is then named SERVER+MODEL (e.g. vllm+qwen3tiny), with its own
#           default port (the server's + 100, + 300), PID file and log, so both models can run at
#           once. `lab/start.sh vllm+qwen3tiny` and `lab/start.sh vllm "" qwen3tiny` are the same.
#   litellm: LITELLM_BACKEND_PORT (default: infinity's default port; vllm+whispertiny's for
#            litellm+whispertiny, which serves speech-to-text) and
#            LITELLM_BACKEND_PROVIDER (infinity | hosted_vllm, default infinity; hosted_vllm for
#            litellm+whispertiny) name the backend;
#            LITELLM_MASTER_KEY is the key clients send (generated once if unset);
#            LITELLM_SPEECH_PORT routes the tiny Whisper to the vLLM there as well,
#            LITELLM_RERANK_PORT the tiny BERT cross-encoder.
#   litserve: LITSERVE_SPEECH=1 adds the speech route with the tiny Whisper to the same server,
#            LITSERVE_RERANK=1 the rerank routes with the tiny BERT cross-encoder (the migration
#            study's home-made server answered all three at one address).
#   portkey: PORTKEY_BACKEND (a lab server, default infinity) names the backend, which must be
#            running; PORTKEY_ROUTE_HEADERS=0 leaves requests without routing headers unrouted
#            (400), so that clients must send x-portkey-provider and x-portkey-custom-host.
#   EMBEDCHECK_LAB_START_TIMEOUT overrides the wait in seconds.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$#" -ge 1 ] || die "usage: $0 SERVER[+MODEL] [PORT] [MODEL]"
server="$1"
if [ -n "${3:-}" ]; then
  [[ "$server" != *+* ]] || die "name the model once: '$server' or '$3'"
  [ "$3" = minilm ] || server="$server+$3"
fi
use_model "$(instance_model "$server")" || die "unknown model in '$server' (one of: ${LAB_MODELS[*]})"
[ "$LAB_MODEL" != minilm ] || server="$(instance_server "$server")"
port="${2:-$(default_port "$server" || true)}"
[ -n "$port" ] || die "unknown server '$server' (one of: ${ALL_SERVERS[*]} ${VARIANT_SERVERS[*]}, optionally +MODEL)"
[[ "$port" =~ ^[0-9]+$ ]] || die "bad port '$port'"
timeout_s="${EMBEDCHECK_LAB_START_TIMEOUT:-$(default_start_timeout "$server")}"

if running_pgid "$server" >/dev/null; then
  die "$server is already running (PID file $(pid_file "$server")); stop it first"
fi
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  die "127.0.0.1:$port is already in use"
fi

# A variant runs its base server's piece, with its own PID file, port and log.
piece="$(base_server "$server")"
venv="$(venv_dir "$piece")"
[ -f "$(piece_marker "$piece")" ] || die "$piece is not installed: run lab/install.sh $piece"
extra=()
while IFS= read -r arg; do extra+=("$arg"); done < <(variant_args "$server")
[ -f "$MODEL_MARKER" ] || die "the model $LAB_MODEL is not installed: run lab/install.sh $MODEL_PIECE"

export_server_env
mkdir -p "$RUN_DIR" "$LOG_DIR"
base="http://127.0.0.1:$port"
auth=()

case "$piece" in
  infinity)
    cmd=("$venv/bin/infinity_emb" v2 --model-id "$MODEL_DIR" --served-model-name "$MODEL_NAME"
      --engine torch --device cpu --url-prefix /v1 --host 127.0.0.1 --port "$port")
    ;;
  vllm)
    export VLLM_HOST_IP=127.0.0.1 VLLM_CPU_KVCACHE_SPACE=1
    runner=(--runner pooling)
    # The tiny Whisper is served for transcription, generating (the default runner).
    [ "$LAB_MODEL" != whispertiny ] || runner=()
    cmd=("$venv/bin/vllm" serve "$MODEL_DIR" "${runner[@]}" --dtype float32 --max-model-len "$MODEL_MAX_LEN"
      --served-model-name "$MODEL_NAME" --host 127.0.0.1 --port "$port")
    ;;
  dynamo)
    cmd=("$LAB_DIR/libexec/dynamo-run.sh" "$port" "$LAB_MODEL")
    ;;
  llamacpp)
    [ -s "$GGUF_FILE" ] || die "no GGUF model at $GGUF_FILE: run lab/install.sh llamacpp"
    # n_batch stays at its default (512): what a user of the documented command gets.
    cmd=("$venv/bin/python" -m llama_cpp.server --model "$GGUF_FILE" --model_alias "$MODEL_NAME"
      --embedding true --n_ctx "$MODEL_MAX_LEN" --host 127.0.0.1 --port "$port")
    ;;
  litellm)
    check_litellm_site "$venv"
    # The tiny Whisper is served for speech-to-text by vLLM alone (litellm+whispertiny).
    mode=embedding backend=infinity default_provider=infinity
    if [ "$LAB_MODEL" = whispertiny ]; then
      mode=audio_transcription backend=vllm default_provider=hosted_vllm
    fi
    backend_port="${LITELLM_BACKEND_PORT:-$(default_port "$backend+$LAB_MODEL")}"
    provider="${LITELLM_BACKEND_PROVIDER:-$default_provider}"
    case "$provider" in infinity | hosted_vllm) ;; *) die "LITELLM_BACKEND_PROVIDER must be infinity or hosted_vllm" ;; esac
    if ! curl_local -f -o /dev/null --max-time 5 "http://127.0.0.1:$backend_port/v1/models"; then
      die "no backend answers at http://127.0.0.1:$backend_port/v1/models (start it first, e.g. lab/start.sh $backend+$LAB_MODEL)"
    fi
    LITELLM_MASTER_KEY="$(litellm_master_key)"
    export LITELLM_MASTER_KEY LITELLM_LOCAL_MODEL_COST_MAP=True LITELLM_TELEMETRY=False
    conf="$STATE_DIR/litellm/config-$port.yaml"
    mkdir -p "$(dirname "$conf")"
    cat >"$conf" <<YAML
model_list:
  - model_name: $MODEL_NAME
    litellm_params:
      model: $provider/$MODEL_NAME
      api_base: http://127.0.0.1:$backend_port/v1
      api_key: none
    model_info:
      mode: $mode
YAML
    # LITELLM_SPEECH_PORT: one gateway for embeddings and speech, the tiny Whisper routed to
    # the vLLM on that port (the migration study's target served both at one address).
    if [ -n "${LITELLM_SPEECH_PORT:-}" ]; then
      curl_local -f -o /dev/null --max-time 5 "http://127.0.0.1:$LITELLM_SPEECH_PORT/v1/models" \
        || die "no speech backend answers at http://127.0.0.1:$LITELLM_SPEECH_PORT/v1/models (lab/start.sh vllm+whispertiny)"
      cat >>"$conf" <<YAML
  - model_name: $WHISPERTINY_NAME
    litellm_params:
      model: hosted_vllm/$WHISPERTINY_NAME
      api_base: http://127.0.0.1:$LITELLM_SPEECH_PORT/v1
      api_key: none
    model_info:
      mode: audio_transcription
YAML
    fi
    # LITELLM_RERANK_PORT: and the tiny BERT cross-encoder routed to the vLLM on that port.
    if [ -n "${LITELLM_RERANK_PORT:-}" ]; then
      curl_local -f -o /dev/null --max-time 5 "http://127.0.0.1:$LITELLM_RERANK_PORT/v1/models" \
        || die "no rerank backend answers at http://127.0.0.1:$LITELLM_RERANK_PORT/v1/models (lab/rerank/serve.sh vllm-bert)"
      cat >>"$conf" <<YAML
  - model_name: embedcheck/tiny-rerank-bert
    litellm_params:
      model: hosted_vllm/embedcheck/tiny-rerank-bert
      api_base: http://127.0.0.1:$LITELLM_RERANK_PORT/v1
      api_key: none
    model_info:
      mode: rerank
YAML
    fi
    cmd=("$venv/bin/litellm" --config "$conf" --host 127.0.0.1 --port "$port" --telemetry False)
    auth=(-H "Authorization: Bearer $LITELLM_MASTER_KEY")
    ;;
  llamaserver)
    [ -s "$GGUF_FILE" ] || die "no GGUF model at $GGUF_FILE: run lab/install.sh llamaserver"
    # Pooling comes from the GGUF (all-MiniLM-L6-v2: mean; the tiny Qwen3: last) unless a
    # variant passes --pooling. An input must fit one (micro)batch, so both are the context.
    cmd=("$LLAMASERVER_BIN" --model "$GGUF_FILE" --alias "$MODEL_NAME" --embedding
      -c "$MODEL_MAX_LEN" -b "$MODEL_MAX_LEN" -ub "$MODEL_MAX_LEN" --host 127.0.0.1 --port "$port")
    ;;
  litserve)
    cmd=("$venv/bin/python" "$LAB_DIR/libexec/litserve_server.py" "$MODEL_DIR" "$port")
    # LITSERVE_SPEECH=1: the same server answers speech-to-text with the tiny Whisper too.
    [ "${LITSERVE_SPEECH:-0}" = 1 ] && cmd+=(--speech "$WHISPERTINY_DIR" "$WHISPERTINY_NAME")
    # LITSERVE_RERANK=1: and rerank with the tiny BERT cross-encoder (lab/rerank/build.sh).
    [ "${LITSERVE_RERANK:-0}" = 1 ] && cmd+=(--rerank "$STATE_DIR/model/tiny-rerank-bert" embedcheck/tiny-rerank-bert)
    # With the tiny Whisper: the home-made speech-to-text server (litserve+whispertiny).
    [ "$LAB_MODEL" = whispertiny ] \
      && cmd=("$venv/bin/python" "$LAB_DIR/libexec/litserve_speech.py" "$MODEL_DIR" "$port" "$MODEL_NAME")
    ;;
  whispercpp)
    [ "$LAB_MODEL" = whispertiny ] || die "whispercpp serves speech only: start whispercpp+whispertiny"
    [ -s "$WHISPERTINY_GGML" ] || die "no ggml model at $WHISPERTINY_GGML: run lab/install.sh whispercpp"
    # OpenAI's route as its inference path, as its README suggests for OpenAI clients.
    cmd=("$WHISPERCPP_BIN" -m "$WHISPERTINY_GGML" --host 127.0.0.1 --port "$port"
      --inference-path /v1/audio/transcriptions -t 2)
    ;;
  fwserver)
    [ "$LAB_MODEL" = whispertiny ] || die "fwserver serves speech only: start fwserver+whispertiny"
    cmd=("$venv/bin/faster-whisper-server" "$WHISPERTINY_CT2_DIR" --host 127.0.0.1 --port "$port")
    ;;
  portkey)
    backend="${PORTKEY_BACKEND:-infinity}"
    [ "$LAB_MODEL" = minilm ] || [[ "$backend" == *+* ]] || backend="$backend+$LAB_MODEL"
    backend_port="$(cat "$(port_file "$backend")" 2>/dev/null || default_port "$backend")" \
      || die "PORTKEY_BACKEND must be a lab server (one of: ${ALL_SERVERS[*]})"
    portkey_route="http://127.0.0.1:$backend_port/v1"
    if ! curl_local -f -o /dev/null --max-time 5 "$portkey_route/models"; then
      die "no backend answers at $portkey_route/models (start it first, e.g. lab/start.sh $backend)"
    fi
    # The preload binds every listening socket to 127.0.0.1 and, unless PORTKEY_ROUTE_HEADERS=0,
    # routes a request that names no route of its own to the backend (libexec/portkey-loopback.mjs).
    if [ "${PORTKEY_ROUTE_HEADERS:-1}" != 0 ]; then
      export EMBEDCHECK_LAB_PORTKEY_ROUTE="$portkey_route"
    else
      unset EMBEDCHECK_LAB_PORTKEY_ROUTE
    fi
    export NODE_ENV=production
    cmd=(node --import "$LAB_DIR/libexec/portkey-loopback.mjs" "$PORTKEY_MAIN" "--port=$port" --headless)
    ;;
  *) die "unknown server '$server' (one of: ${ALL_SERVERS[*]})" ;;
esac

cmd+=("${extra[@]}")

logf="$LOG_DIR/$server.log"
[ -f "$logf" ] && mv -f "$logf" "$logf.1"
log "starting $server on 127.0.0.1:$port (log: $logf)${extra[*]:+ with ${extra[*]}}"
t0=$SECONDS
# A background job of a non-interactive shell is no process-group leader, so setsid makes it
# the leader of a new session without forking: $! is then the session's PID and PGID.
setsid "${cmd[@]}" >"$logf" 2>&1 </dev/null &
pid=$!
pgid="$(ps -o pgid= -p "$pid" | tr -d ' ')"
[ "$pgid" = "$pid" ] || log "warning: PGID $pgid differs from PID $pid"
echo "$pid $pgid $(proc_starttime "$pid")" >"$(pid_file "$server")"
echo "$port" >"$(port_file "$server")"

serves() {
  case "$piece" in
    vllm | llamaserver) curl_local -f -o /dev/null --max-time 5 "$base/health" 2>/dev/null || return 1 ;;
    fwserver | whispercpp)
      # No /v1/models: /health once it listens (the model is loaded before).
      curl_local -f -o /dev/null --max-time 5 "$base/health" 2>/dev/null
      return
      ;;
    litellm) curl_local -f -o /dev/null --max-time 5 "$base/health/liveliness" 2>/dev/null || return 1 ;;
    litserve)
      # No /v1/models: /health answers 200 once the inference worker has loaded the model,
      # then one embedding request must come back.
      curl_local -f -o /dev/null --max-time 5 "$base/health" 2>/dev/null || return 1
      # The speech server (litserve+whispertiny) has no embeddings route.
      [ "$LAB_MODEL" = whispertiny ] && return 0
      curl_local -f --max-time 30 -H 'Content-Type: application/json' \
        -d "{\"model\":\"$MODEL_NAME\",\"input\":\"hello\"}" "$base/v1/embeddings" 2>/dev/null \
        | grep -qF '"embedding"'
      return
      ;;
    portkey)
      # GET / answers once the gateway listens; then one embedding request through it, with
      # the routing headers spelled out, must come back.
      curl_local -f --max-time 5 "$base/" 2>/dev/null | grep -qF 'AI Gateway' || return 1
      curl_local -f --max-time 30 -H 'Content-Type: application/json' -H 'x-portkey-provider: openai' \
        -H "x-portkey-custom-host: $portkey_route" -d "{\"model\":\"$MODEL_NAME\",\"input\":\"hello\"}" \
        "$base/v1/embeddings" 2>/dev/null | grep -qF '"embedding"'
      return
      ;;
  esac
  curl_local -f --max-time 5 "${auth[@]}" "$base/v1/models" 2>/dev/null | grep -qF "\"$MODEL_NAME\""
}

while ! serves; do
  if ! kill -0 "$pid" 2>/dev/null; then
    tail -n 40 "$logf" >&2 || true
    rm -f "$(pid_file "$server")" "$(port_file "$server")"
    die "$server exited before it served (log: $logf)"
  fi
  if [ $((SECONDS - t0)) -ge "$timeout_s" ]; then
    tail -n 40 "$logf" >&2 || true
    log "$server did not serve within $timeout_s s; stopping it"
    "$LAB_DIR/stop.sh" "$server" >&2 || true
    exit 1
  fi
  sleep 1
done
ready=$((SECONDS - t0))
echo "$ready" >"$RUN_DIR/$server.ready_s"
log "$server serves after $ready s; RSS $(($(group_rss_kib "$pgid") / 1024)) MiB (process group $pgid)"
echo "$base/v1"
