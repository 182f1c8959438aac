#!/usr/bin/env bash
# Runs the real clients with their default settings (lab/clients/profile_check.py and
# .mjs: openai-python, langchain-openai, openai-node) against a running lab server, and,
# given an embedcheck report.json of the same server, sets each client profile's verdict
# beside what the real client experienced.
# Usage: lab/profile-check.sh SERVER[+MODEL] [REPORT_JSON] [--aggressive]
#   --aggressive also sends LangChain "embedding servers" (cl100k id 95711, beyond the
#   model's vocabulary); some servers abort on such ids.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$#" -ge 1 ] || die "usage: $0 SERVER [REPORT_JSON] [--aggressive]"
server="$1"
# SERVER+MODEL serves another model (lib.sh use_model).
use_model "$(instance_model "$server")" || die "unknown model in '$server' (one of: ${LAB_MODELS[*]})"
shift
report="" aggressive=()
for arg in "$@"; do
  case "$arg" in
    --aggressive) aggressive=(--aggressive) ;;
    *) report="$arg" ;;
  esac
done
port="$(cat "$(port_file "$server")" 2>/dev/null || default_port "$server")"
[ -f "$(venv_dir clients)/.lab-installed" ] || die "clients are not installed: run lab/install.sh clients"
export_server_env
export OPENAI_API_KEY=sk-none EMBEDCHECK_LAB_DIR="$STATE_DIR"
[ "$(instance_server "$server")" = litellm ] && OPENAI_API_KEY="$(litellm_master_key)"
base="http://127.0.0.1:$port/v1"
real="$(mktemp)"
trap 'rm -f "$real"' EXIT
"$(venv_dir clients)/bin/python" "$LAB_DIR/clients/profile_check.py" "$base" "$MODEL_NAME" --json "${aggressive[@]}" >"$real"
(cd "$LAB_DIR/clients" && node profile_check.mjs "$base" "$MODEL_NAME" --json) >>"$real"
python3 - "$server" "$real" "$report" <<'PY'
import json, sys
server, real, report = sys.argv[1:]
outcomes = [json.loads(line) for line in open(real)]
profiles = {p["client"]: p for p in json.load(open(report))["clients"]} if report else {}
word = lambda works: {True: "works", False: "breaks", None: "unknown"}[works]
disagree = 0
for o in sorted(outcomes, key=lambda o: ["openai-python", "openai-node", "langchain-openai"].index(o["client"])):
    how = "worked" if o["worked"] else f"raised {o['raised']}" if o["raised"] else "wrong vectors"
    low = "-" if o["cosine"] is None else f"{o['cosine']:.4f}"
    line = f"{server:<9} {o['client']:<17} real: {how[:70]}; cosine {low}; retries {o['retries']}"
    if report:
        p = profiles[o["client"]]
        agree = p["works"] == o["worked"]
        disagree += not agree
        line += f" | profile: {word(p['works'])} | {'agree' if agree else 'DISAGREE'}"
    print(line)
    for note in o["notes"]:
        print(f"{'':<28}{note[:110]}")
sys.exit(1 if disagree else 0)
PY
