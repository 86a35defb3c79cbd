#!/usr/bin/env bash
# The script behind action.yml (a composite GitHub Action): install voirdire, run `voirdire validate`
# with a Markdown summary for the job page, optionally a JUnit file, and exit with validate's code
# (0 passed, 1 could not run, 2 malformed command line, 3 failed the --fail-on gate).
# Inputs come as environment variables (VOIRDIRE_FILE, VOIRDIRE_JUDGE, VOIRDIRE_FAIL_ON, VOIRDIRE_ARGS,
# VOIRDIRE_JUNIT, VOIRDIRE_PACKAGE, VOIRDIRE_ACTION_PATH); VOIRDIRE_INSTALL=0 skips the install and
# VOIRDIRE_BIN names the command (tests run this script locally with both).
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

args=(validate "$VOIRDIRE_FILE")
for j in ${VOIRDIRE_JUDGE//,/ }; do
  args+=(--judge "$j")
done
if [ -n "${VOIRDIRE_FAIL_ON:-}" ]; then
  args+=(--fail-on "$VOIRDIRE_FAIL_ON")
fi
if [ -n "${VOIRDIRE_ARGS:-}" ]; then
  read -r -a extra <<< "$VOIRDIRE_ARGS"
  args+=("${extra[@]}")
fi

summary="$(mktemp)"
"$bin" "${args[@]}" --format markdown > "$summary"
rc=$?
cat "$summary"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$summary" >> "$GITHUB_STEP_SUMMARY"
fi
rm -f "$summary"
if [ -n "${VOIRDIRE_JUNIT:-}" ] && { [ "$rc" = 0 ] || [ "$rc" = 3 ]; }; then
  "$bin" "${args[@]}" --format junit > "$VOIRDIRE_JUNIT" || true
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "exit-code=$rc" >> "$GITHUB_OUTPUT"
fi
exit "$rc"
