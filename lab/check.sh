#!/usr/bin/env bash
# Sends one POST /v1/embeddings {"model": NAME, "input": "hello"} to a running server and
# checks that it answers 200 with one float vector of the model's dimensions (384; the tiny
# Qwen3: 32).
# Usage: lab/check.sh SERVER[+MODEL] [PORT]
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$#" -ge 1 ] || die "usage: $0 SERVER [PORT]"
server="$1"
# SERVER+MODEL serves another model (lib.sh use_model).
use_model "$(instance_model "$server")" || die "unknown model in '$server' (one of: ${LAB_MODELS[*]})"
port="${2:-$(cat "$(port_file "$server")" 2>/dev/null || default_port "$server")}"
auth=()
[ "$(instance_server "$server")" = litellm ] && auth=(-H "Authorization: Bearer $(litellm_master_key)")
body="$(mktemp)"
trap 'rm -f "$body"' EXIT
code="$(curl_local -o "$body" -w '%{http_code}' "${auth[@]}" -H 'Content-Type: application/json' \
  -d "{\"model\":\"$MODEL_NAME\",\"input\":\"hello\"}" "http://127.0.0.1:$port/v1/embeddings")"
[ "$code" = 200 ] || { cat "$body" >&2; echo >&2; die "$server: HTTP $code"; }
python3 - "$body" "$MODEL_DIM" "$server" <<'PY'
import json, math, sys
doc = json.load(open(sys.argv[1]))
dim, server = int(sys.argv[2]), sys.argv[3]
emb = doc["data"][0]["embedding"]
assert isinstance(emb, list) and len(emb) == dim, f"{server}: embedding is not a {dim}-float list"
norm = math.sqrt(sum(x * x for x in emb))
print(f"{server}: HTTP 200, {len(emb)} dims, norm {norm:.4f}, model {doc.get('model')!r}, usage {doc.get('usage')}")
PY
