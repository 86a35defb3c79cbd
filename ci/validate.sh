#!/usr/bin/env bash
# The script behind action.yml (a composite GitHub Action): install voirdire, run `voirdire validate`
# with a Markdown summary for the job page, optionally a JUnit file, and exit with validate's code
# (0 passed, 1 could not run, 2 malformed command line, 3 failed the --fail-on gate).
# Inputs come as environment variables (VOIRDIRE_FILE, VOIRDIRE_JUDGE, VOIRDIRE_FAIL_ON, VOIRDIRE_ARGS,
# VOIRDIRE_JUNIT, VOIRDIRE_PACKAGE, VOIRDIRE_ACTION_PATH); VOIRDIRE_INSTALL=0 skips the install,
# VOIRDIRE_BIN names the command and VOIRDIRE_PYTHON the Python that splits 'args' (tests run this
# script locally with all three). No input is ever evaluated, expanded or glob-matched.
set -uo pipefail

if [ -z "${VOIRDIRE_FILE:-}" ]; then
  echo "error: the 'file' input is required." >&2
  exit 1
fi
if [ "${VOIRDIRE_INSTALL:-1}" = "1" ]; then
  pkg="${VOIRDIRE_PACKAGE:-}"
  [ -n "$pkg" ] || pkg="${VOIRDIRE_ACTION_PATH:-.}"
  python -m pip install --quiet --disable-pip-version-check "$pkg" || { echo "error: could not install $pkg" >&2; exit 1; }
fi
bin="${VOIRDIRE_BIN:-voirdire}"

py="${VOIRDIRE_PYTHON:-python}"
command -v "$py" >/dev/null 2>&1 || py=python3

args=(validate "$VOIRDIRE_FILE")
# judges: separated by commas, or by white space when there is no comma; never glob-expanded
# (a judge named '*' stays '*') and never split inside a comma-separated name ('GPT 4o, Claude')
judges="${VOIRDIRE_JUDGE:-}"
if [[ "$judges" == *,* ]]; then
  IFS=',' read -r -a parts <<< "$judges"
else
  read -r -a parts <<< "$judges"  # unquoted words are split by read, not by the shell: no globbing
fi
for j in ${parts[@]+"${parts[@]}"}; do
  j="${j#"${j%%[![:space:]]*}"}"  # trim
  j="${j%"${j##*[![:space:]]}"}"
  [ -n "$j" ] && args+=(--judge "$j")
done
if [ -n "${VOIRDIRE_FAIL_ON:-}" ]; then
  args+=(--fail-on "$VOIRDIRE_FAIL_ON")
fi
# args: split like a shell would (quotes and backslashes: --where "criterion=Empathy level"), by
# Python's shlex; nothing is evaluated, expanded or globbed
if [ -n "${VOIRDIRE_ARGS:-}" ]; then
  words="$(mktemp)"
  if ! "$py" -c '
import shlex, sys
try:
    words = shlex.split(sys.argv[1])
except ValueError as exc:
    sys.exit(f"error: the args input cannot be split into words ({exc}): close every quote.")
sys.stdout.write("".join(w + "\0" for w in words))' "$VOIRDIRE_ARGS" > "$words"; then
    rm -f "$words"
    exit 2
  fi
  while IFS= read -r -d '' w; do args+=("$w"); done < "$words"
  rm -f "$words"
fi
# one run writes both the Markdown summary (stdout) and the JUnit file
if [ -n "${VOIRDIRE_JUNIT:-}" ]; then
  args+=(--junit "$VOIRDIRE_JUNIT")
fi

summary="$(mktemp)"
"$bin" "${args[@]}" --format markdown > "$summary"
rc=$?
cat "$summary"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$summary" >> "$GITHUB_STEP_SUMMARY"
fi
rm -f "$summary"
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "exit-code=$rc" >> "$GITHUB_OUTPUT"
fi
exit "$rc"
