#!/usr/bin/env bash
# Writes the tiny Whisper's known answers (lab/speech_reference.py, a plain greedy loop over
# transformers) for the suite's own clip, with the gguf-convert venv's torch and
# transformers, to standard output.
# Usage: lab/speech-reference.sh > fixtures/reference/whisper-tiny-random.jsonl
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -f "$WHISPERTINY_MARKER" ] || die "the tiny Whisper is not installed: run lab/install.sh whispertiny"
python="$(venv_dir gguf-convert)/bin/python"
[ -x "$python" ] || die "transformers comes from the gguf-convert venv: run lab/install.sh whispertiny"
clips="$(mktemp -d)"
trap 'rm -rf "$clips"' EXIT
# The very bytes the suite uploads: the engine's own clip.
(cd "$LAB_DIR/.." && cargo run -q -p embedcheck-core --example speech_clip) > "$clips/speech.wav"
"$python" "$LAB_DIR/speech_reference.py" "$WHISPERTINY_DIR" --name "$WHISPERTINY_NAME" "$clips/speech.wav"
