#!/usr/bin/env bash
# The embedcheck GitHub Action (action.yml runs this): install embedcheck into a venv,
# audit, append report.md to the job summary, write the step's outputs, and exit with
# embedcheck's status. The inputs arrive as INPUT_* variables (action.yml maps them);
# the key arrives only as EMBEDCHECK_ACTION_KEY and is passed by name, never as a value.
set -uo pipefail

: "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set (a runner sets it)}"
: "${GITHUB_STEP_SUMMARY:?GITHUB_STEP_SUMMARY is not set (a runner sets it)}"
action_path="${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/../.." && pwd)}"
tmp="${RUNNER_TEMP:-${TMPDIR:-/tmp}}"
python="${EMBEDCHECK_ACTION_PYTHON:-python3}"

report_dir="${INPUT_REPORT_DIR:-}"
[ -n "$report_dir" ] || report_dir="$tmp/embedcheck-report"
mkdir -p "$report_dir"
report_dir="$(cd "$report_dir" && pwd)"

# Which embedcheck: empty = this action's own checkout, built as a wheel (needs a Rust
# toolchain, as GitHub's hosted runners have); a version (0.1.0) = that release from PyPI;
# a path (a .whl file or a source directory) = that.
version="${INPUT_VERSION:-}"
case "$version" in
  "") spec="$action_path" ;;
  */* | *.whl | .*) spec="$version" ;;
  *) spec="embedcheck==$version" ;;
esac
venv="$tmp/embedcheck-venv"
echo "::group::Install embedcheck ($spec)"
"$python" -m venv --clear "$venv" &&
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$spec"
installed=$?
echo "::endgroup::"
if [ "$installed" -ne 0 ]; then
  echo "::error::embedcheck could not be installed from $spec"
  exit 1
fi

args=(--report-dir "$report_dir")
[ -z "${INPUT_ENDPOINT:-}" ] || args+=(--endpoint "$INPUT_ENDPOINT")
[ -z "${INPUT_MODEL:-}" ] || args+=(--model "$INPUT_MODEL")
if [ -n "${EMBEDCHECK_ACTION_KEY:-}" ]; then
  args+=(--api-key-env EMBEDCHECK_ACTION_KEY)
else
  unset EMBEDCHECK_ACTION_KEY
fi
[ -z "${INPUT_EXPECTATIONS:-}" ] || args+=(--expectations "$INPUT_EXPECTATIONS")
[ -z "${INPUT_CONTRACT:-}" ] || args+=(--contract "$INPUT_CONTRACT")
# `args` is split as a shell would split words (quotes kept together), without running it.
extra=()
if [ -n "${INPUT_ARGS:-}" ]; then
  mapfile -t extra < <("$venv/bin/python" -c \
    'import shlex, sys; sys.stdout.write("".join(w + "\n" for w in shlex.split(sys.argv[1])))' "$INPUT_ARGS")
fi

"$venv/bin/embedcheck" "${args[@]}" "${extra[@]}"
status=$?

# The job summary: report.md (matrix.md for several servers), or why there is none.
summary=""
for name in report.md matrix.md; do
  if [ -f "$report_dir/$name" ]; then summary="$report_dir/$name" && break; fi
done
if [ -n "$summary" ]; then
  cat "$summary" >>"$GITHUB_STEP_SUMMARY"
else
  printf '## embedcheck\n\nNo report was written (exit status %s); see the step log.\n' \
    "$status" >>"$GITHUB_STEP_SUMMARY"
fi

# The conclusion as report.json states it, else as the exit status says.
conclusion=""
if [ -f "$report_dir/report.json" ]; then
  conclusion="$("$venv/bin/python" -c \
    'import json, sys; print(json.load(open(sys.argv[1]))["summary"]["conclusion"])' \
    "$report_dir/report.json" 2>/dev/null)" || conclusion=""
fi
if [ -z "$conclusion" ]; then
  case "$status" in
    0) conclusion=conformant ;;
    101) conclusion=clause_failed ;;
    3) conclusion=not_audited ;;
    130) conclusion=interrupted ;;
    2) conclusion=bad_options ;;
    4) conclusion=no_clause_selected ;;
    *) conclusion=error ;;
  esac
fi
report_json=""
[ ! -f "$report_dir/report.json" ] || report_json="$report_dir/report.json"
[ -n "$report_json" ] || [ ! -f "$report_dir/matrix.json" ] || report_json="$report_dir/matrix.json"
junit=""
[ ! -f "$report_dir/junit.xml" ] || junit="$report_dir/junit.xml"
{
  echo "conclusion=$conclusion"
  echo "report-json=$report_json"
  echo "junit=$junit"
  echo "report-dir=$report_dir"
} >>"$GITHUB_OUTPUT"

# With a baseline report, the step fails on the server's new failures only: the diff's
# table joins the summary and its status stands for the audit's (where the audit ran).
if [ -n "${INPUT_BASELINE_REPORT:-}" ] && [ -n "$report_json" ] &&
  { [ "$status" -eq 0 ] || [ "$status" -eq 101 ]; }; then
  "$venv/bin/embedcheck" diff "$INPUT_BASELINE_REPORT" "$report_json" --regressions-only \
    >"$tmp/embedcheck-diff.md"
  diffed=$?
  cat "$tmp/embedcheck-diff.md" >>"$GITHUB_STEP_SUMMARY"
  case "$diffed" in
    0) status=0 ;;
    101) echo "::error::embedcheck: the server fails clauses it passed in $INPUT_BASELINE_REPORT" ;;
    *) status="$diffed" ;;
  esac
fi

if [ "$status" -ne 0 ]; then
  echo "::error::embedcheck: $conclusion (exit status $status); reports in $report_dir"
fi
exit "$status"
