#!/usr/bin/env bash
# Compares embedcheck's latency measurement (migration::latency) with oha on the same
# server in one run: starts the reference server (release build, the study's 1024
# dimensions), then runs the latency_vs_oha bench, which alternates both tools.
# Not part of CI. Usage: latency_vs_oha.sh [REQUESTS] [CONCURRENCY]
set -euo pipefail
cd "$(dirname "$0")/../../.."

command -v oha >/dev/null || cargo install oha --locked
cargo build --release -p reference-server
port="${PORT:-18780}"
target/release/embedcheck-reference-server --port "$port" --dimensions 1024 --max-input-tokens 1024 &
server=$!
trap 'kill "$server"' EXIT
for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
done
cargo bench -p embedcheck-core --bench latency_vs_oha -- "http://127.0.0.1:$port/v1" "${1:-2000}" "${2:-4}"
