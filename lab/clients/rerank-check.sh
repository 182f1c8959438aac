#!/usr/bin/env bash
# Runs lab/clients/rerank_check.py with the lab's offline environment (lab/lib.sh's
# export_server_env: HF offline, proxies at the closed port 127.0.0.1:9, NO_PROXY for loopback).
# Usage: lab/clients/rerank-check.sh echo [--json OUT] [--markdown]
#        lab/clients/rerank-check.sh servers LABEL=http://127.0.0.1:PORT[,key-env=VAR] ... [--json OUT]
# The clients' venvs: lab/install.sh rerank-clients.
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
export_server_env
exec python3 "$LAB_DIR/clients/rerank_check.py" "$@"
