#!/usr/bin/env bash
# Runs the real clients (OpenAI Python SDK, LangChain OpenAIEmbeddings, OpenAI Node SDK)
# against a running lab server, offline (tiktoken reads its cache in the state dir).
# Usage: lab/clients.sh SERVER[+MODEL] [PORT]
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$#" -ge 1 ] || die "usage: $0 SERVER [PORT]"
server="$1"
# SERVER+MODEL serves another model (lib.sh use_model).
use_model "$(instance_model "$server")" || die "unknown model in '$server' (one of: ${LAB_MODELS[*]})"
port="${2:-$(cat "$(port_file "$server")" 2>/dev/null || default_port "$server")}"
[ -f "$(venv_dir clients)/.lab-installed" ] || die "clients are not installed: run lab/install.sh clients"
export_server_env
export OPENAI_API_KEY=sk-none
[ "$(instance_server "$server")" = litellm ] && OPENAI_API_KEY="$(litellm_master_key)"
base="http://127.0.0.1:$port/v1"
rc=0
"$(venv_dir clients)/bin/python" "$LAB_DIR/clients/smoke.py" "$base" "$MODEL_NAME" || rc=1
(cd "$LAB_DIR/clients" && node smoke.mjs "$base" "$MODEL_NAME") || rc=1
exit "$rc"
