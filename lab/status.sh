#!/usr/bin/env bash
# Lists the lab's servers (the misconfigured variants, then the instances serving the tiny
# Qwen3-Embedding, SERVER+MODEL): running or not, PID/PGID, port,
# base URL and RSS of the process group; then the rerank servers of lab/rerank/serve.sh
# that are running (rerank-NAME).
# Usage: lab/status.sh
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

row() { printf '%-28s %-9s %-8s %-6s %-9s %s\n' "$@"; }
row SERVER STATE PGID PORT RSS_MiB URL
for server in "${ALL_SERVERS[@]}" "${VARIANT_SERVERS[@]}" "${QWEN3_SERVERS[@]}"; do
  installed=no
  [ -f "$(piece_marker "$(base_server "$server")")" ] && installed=yes
  if pgid="$(running_pgid "$server")"; then
    port="$(cat "$(port_file "$server")" 2>/dev/null || echo '?')"
    row "$server" running "$pgid" "$port" "$(($(group_rss_kib "$pgid") / 1024))" "http://127.0.0.1:$port/v1"
  elif [ -f "$(pid_file "$server")" ]; then
    row "$server" stale - - - "(run lab/stop.sh $server)"
  else
    row "$server" stopped - "$(default_port "$server")" - "installed=$installed"
  fi
done
for pid in "$RUN_DIR"/rerank-*.pid; do
  [ -e "$pid" ] || continue
  server="$(basename "$pid" .pid)"
  if pgid="$(running_pgid "$server")"; then
    port="$(cat "$(port_file "$server")" 2>/dev/null || echo '?')"
    row "$server" running "$pgid" "$port" "$(($(group_rss_kib "$pgid") / 1024))" "http://127.0.0.1:$port/v1"
  else
    row "$server" stale - - - "(run lab/stop.sh $server)"
  fi
done
