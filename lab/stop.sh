#!/usr/bin/env bash
# Stops a server started by lab/start.sh: SIGTERM to its process group (from its PID file),
# then SIGKILL after EMBEDCHECK_LAB_STOP_TIMEOUT seconds (default 60). Never by name.
# Usage: lab/stop.sh SERVER[+MODEL] [MODEL]   (as lab/start.sh named it, e.g. vllm+qwen3tiny)
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$#" -ge 1 ] && [ "$#" -le 2 ] || die "usage: $0 SERVER[+MODEL] [MODEL]"
server="$1"
if [ -n "${2:-}" ] && [ "$2" != minilm ]; then server="$server+$2"; fi
pidf="$(pid_file "$server")"
[ -f "$pidf" ] || { log "$server: not running (no PID file)"; exit 0; }
if ! pgid="$(running_pgid "$server")"; then
  log "$server: stale PID file (the process is gone); removing it"
  read -r _ pgid _ <"$pidf" || true
  # Leftover members of the old group, if any, still belong to it.
  if [ -n "${pgid:-}" ] && pgrep -g "$pgid" >/dev/null; then
    kill -KILL -- "-$pgid" 2>/dev/null || true
  fi
  rm -f "$pidf" "$(port_file "$server")"
  exit 0
fi

group_alive() { pgrep -g "$1" >/dev/null; }

limit="${EMBEDCHECK_LAB_STOP_TIMEOUT:-60}"
t0=$SECONDS
log "$server: SIGTERM to process group $pgid"
kill -TERM -- "-$pgid" 2>/dev/null || true
while group_alive "$pgid"; do
  if [ $((SECONDS - t0)) -ge "$limit" ]; then
    log "$server: still running after $limit s; SIGKILL to process group $pgid"
    kill -KILL -- "-$pgid" 2>/dev/null || true
    sleep 1
    break
  fi
  sleep 0.5
done
rm -f "$pidf" "$(port_file "$server")"
log "$server: stopped in $((SECONDS - t0)) s"
