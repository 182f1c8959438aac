#!/usr/bin/env bash
# Checks the remedy a migration report gives for silent truncation ("truncate inputs to
# N tokens with the model's tokenizer"): every fixture document over N tokens is cut to
# N token ids with the model's own tokenizer, sent as token ids to the new server, and
# compared with the old server's vector of the whole text (which it truncated itself).
# Usage: lab/token-cut.sh OLD NEW [TOKENS]   e.g. lab/token-cut.sh infinity dynamo 256
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$#" -ge 2 ] || die "usage: $0 OLD NEW [TOKENS]"
old="$1" new="$2" tokens="${3:-256}"
[ -f "$(venv_dir infinity)/.lab-installed" ] || die "the tokenizer comes from the infinity venv: run lab/install.sh infinity"
export_server_env
port() { cat "$(port_file "$1")" 2>/dev/null || default_port "$1"; }
"$(venv_dir infinity)/bin/python" "$LAB_DIR/libexec/token_cut.py" \
  "http://127.0.0.1:$(port "$old")/v1" "http://127.0.0.1:$(port "$new")/v1" \
  "$MODEL_NAME" "$MODEL_DIR" "$LAB_DIR/../fixtures/corpus/documents.jsonl" "$tokens"
