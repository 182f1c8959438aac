#!/usr/bin/env bash
# Builds Hugging Face text-embeddings-inference (TEI) 1.9.3's text-embeddings-router for CPU
# (candle backend, HTTP server; no ONNX runtime, no MKL, no gRPC, no CUDA) from local git
# clones, with nothing fetched but crates from crates.io, and copies the binary to
# STATE/tei/bin/text-embeddings-router. TEI is not on the package registries; it pins three
# git dependencies, whose clones are given too. About 6 minutes of compiling at one job.
#
#   TEI_GIT=… CANDLE_GIT=… CUDARC_GIT=… INSTA_GIT=… lab/rerank/tei-build.sh
#
# Each variable is the git dir (a bare clone, or a clone's .git) of:
#   TEI_GIT     huggingface/text-embeddings-inference, holding tag v1.9.3
#   CANDLE_GIT  huggingface/candle, holding rev 6381023
#   CUDARC_GIT  coreylowman/cudarc (upstream of Narsil/cudarc), holding rev 8b4f18b
#   INSTA_GIT   OlivierDehaene/insta, holding rev f4f98c0
# Everything is written under STATE/build.
#
# What is patched in the extracted tree (its root Cargo.toml and Cargo.lock only):
#   - candle, candle-nn, candle-transformers, candle-flash-attn: git rev 6381023 -> path = the
#     same rev extracted from the candle clone;
#   - cudarc: git Narsil/cudarc rev 8b4f18b -> path = that rev (only resolved, never compiled:
#     it serves the CUDA features; crates.io's cudarc cannot stand in, it has no
#     `static-linking` feature, which router/Cargo.toml names);
#   - insta (a dev-dependency: resolved, not compiled) -> path = rev f4f98c0;
#   - Cargo.lock: metrics 0.23.0 -> 0.23.1 (0.23.0 fails on rustc >= 1.93; see below).
# rust-toolchain.toml pins 1.92.0; RUSTUP_TOOLCHAIN (default 1.95.0) overrides it.
# TEI_PREPARE_ONLY=1 stops before the build. The build runs at nice 19 with one job. A tree
# already extracted and patched is reused, and cargo builds incrementally into
# STATE/build/tei-target.
set -euo pipefail

LAB=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${STATE:-$LAB/.state}
: "${TEI_GIT:?the git dir of a huggingface/text-embeddings-inference clone holding v1.9.3}"
: "${CANDLE_GIT:?the git dir of a huggingface/candle clone}"
: "${CUDARC_GIT:?the git dir of a coreylowman/cudarc clone}"
: "${INSTA_GIT:?the git dir of an OlivierDehaene/insta clone}"
TEI_TAG=v1.9.3
CANDLE_REV=6381023982251959a2c9bab7378b3013304e192b
INSTA_REV=f4f98c0410b91fb5a28b10df98e4422955be9c2c
CUDARC_REV=8b4f18b4bcd5e4b1a9daf40abc3a2e27f83f06e9
export RUSTUP_TOOLCHAIN=${RUSTUP_TOOLCHAIN:-1.95.0}
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-1}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$STATE/build/tei-target}
# router/build.rs asks git (vergen) for the sha it reports in /info; the tree may sit inside another
# git work tree (this project's), so git is kept from looking above STATE/build, and build.rs then
# takes GIT_SHA: the tag's commit.
export GIT_SHA=${GIT_SHA:-$(git --git-dir="$TEI_GIT" rev-parse "$TEI_TAG^{commit}")}
export GIT_CEILING_DIRECTORIES=$STATE/build

BUILD=$STATE/build
SRC=$BUILD/tei-1.9.3
CANDLE=$BUILD/candle-${CANDLE_REV:0:7}
INSTA=$BUILD/insta-${INSTA_REV:0:7}
CUDARC=$BUILD/cudarc-${CUDARC_REV:0:7}
BIN=$STATE/tei/bin/text-embeddings-router
mkdir -p "$BUILD" "$(dirname "$BIN")"

# fresh GIT_DIR REV DIR: true when DIR does not hold REV's tree yet (a stamp file records it).
fresh() {
  [[ "$(cat "$3/.extracted" 2>/dev/null)" != "$(git --git-dir="$1" rev-parse --verify "$2^{commit}")" ]]
}
# extract GIT_DIR REV DIR: REV's tree into an emptied DIR.
extract() {
  rm -rf "$3"
  mkdir -p "$3"
  git --git-dir="$1" archive "$2" | tar -x -C "$3"
}
# stamp GIT_DIR REV DIR
stamp() {
  git --git-dir="$1" rev-parse --verify "$2^{commit}" >"$3/.extracted"
}

for args in "$CANDLE_GIT $CANDLE_REV $CANDLE" "$INSTA_GIT $INSTA_REV $INSTA" "$CUDARC_GIT $CUDARC_REV $CUDARC"; do
  read -r g r d <<<"$args"
  if fresh "$g" "$r" "$d"; then
    extract "$g" "$r" "$d"
    stamp "$g" "$r" "$d"
  fi
done

if fresh "$TEI_GIT" "$TEI_TAG" "$SRC"; then
  extract "$TEI_GIT" "$TEI_TAG" "$SRC"
  cd "$SRC"
  cp Cargo.toml Cargo.toml.orig
  cp Cargo.lock Cargo.lock.orig
  candle_git='git = "https://github.com/huggingface/candle", rev = "'$CANDLE_REV'"'
  grep -qF "$candle_git" Cargo.toml
  sed -i \
    -e "s|^candle = { $candle_git,|candle = { path = \"$CANDLE/candle-core\",|" \
    -e "s|^candle-nn = { $candle_git,|candle-nn = { path = \"$CANDLE/candle-nn\",|" \
    -e "s|^candle-transformers = { $candle_git,|candle-transformers = { path = \"$CANDLE/candle-transformers\",|" \
    -e "s|^candle-flash-attn = { $candle_git,|candle-flash-attn = { path = \"$CANDLE/candle-flash-attn\",|" \
    -e "s|^cudarc = { git = \"https://github.com/Narsil/cudarc\" , rev = \"$CUDARC_REV\"}|cudarc = { path = \"$CUDARC\" }|" \
    Cargo.toml
  if grep -n 'git = ' Cargo.toml; then
    echo "tei-build: a git source is left in Cargo.toml" >&2
    exit 1
  fi
  cat >>Cargo.toml <<EOF

# lab: the git dev-dependency insta from a local extraction of the same rev
[patch."https://github.com/OlivierDehaene/insta"]
insta = { path = "$INSTA" }
EOF
  # Re-resolve only what the patches changed (their lock entries lose their git source).
  nice -n 19 cargo update --workspace
  # metrics 0.23.0 does not compile with rustc >= 1.93 (E0521, rust-lang/rust#141402, a future-
  # compatibility lint turned into an error); 0.23.1 (same API) is the fix. Needed because the
  # pinned toolchain 1.92.0 cannot be installed here.
  nice -n 19 cargo update -p metrics@0.23.0 --precise 0.23.1
  stamp "$TEI_GIT" "$TEI_TAG" "$SRC"
fi

[[ -z "${TEI_PREPARE_ONLY:-}" ]] || exit 0
cd "$SRC/router"
start=$(date +%s)
nice -n 19 cargo build --release --bin text-embeddings-router --no-default-features --features candle,http
echo "cargo build: $(($(date +%s) - start)) s" >&2
install -m 0755 "$CARGO_TARGET_DIR/release/text-embeddings-router" "$BIN"
ls -l "$BIN" >&2
