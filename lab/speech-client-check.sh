#!/usr/bin/env bash
# Runs openai-python's real audio calls (lab/clients/speech_check.py: transcriptions in each
# response_format, streamed, and translations) against a running lab speech server, with the
# suite's own clip, to set beside the openai-python-audio profile in that server's report.
# Usage: lab/speech-client-check.sh SERVER+whispertiny [MODEL]
#   MODEL: what `model` says (default: the tiny Whisper's name on vLLM, whisper-1 elsewhere,
#   as lab/speech-matrix.sh sends it)
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$#" -ge 1 ] || die "usage: $0 SERVER+whispertiny [MODEL]"
server="$1"
port="$(cat "$(port_file "$server")" 2>/dev/null || default_port "$server")"
[ -f "$(venv_dir clients)/.lab-installed" ] || die "clients are not installed: run lab/install.sh clients"
case "$(instance_server "$server")" in
  vllm) model="${2:-$WHISPERTINY_NAME}" ;;
  *) model="${2:-whisper-1}" ;;
esac
clip="$(mktemp --suffix=.wav)"
trap 'rm -f "$clip"' EXIT
(cd "$LAB_DIR/.." && cargo run -q -p embedcheck-core --example speech_clip) >"$clip"
"$(venv_dir clients)/bin/python" "$LAB_DIR/clients/speech_check.py" "http://127.0.0.1:$port/v1" "$model" "$clip"
