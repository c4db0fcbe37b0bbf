#!/usr/bin/env bash
# Writes docs/cli.md from the binary's own --help, so the CLI reference cannot drift.
#   scripts/gen-cli-doc.sh BIN > docs/cli.md      regenerate
#   scripts/gen-cli-doc.sh BIN --check docs/cli.md   exit 1 if the file is stale (a test)
set -euo pipefail
BIN=$1
render() {
  cat <<'HEAD'
# CLI reference

Generated from `inferscope … --help` by `scripts/gen-cli-doc.sh`; a test fails when this
file and the binary disagree. Exit codes: 0 success, 2 bad input (the message names the
file, line and field, and nothing is written), 130 interrupted (partial results written).
Definitions of every reported metric: [metrics.md](metrics.md).

HEAD
  echo '```'
  "$BIN" --help
  echo '```'
  # Subcommands, and their subcommands, in the order --help lists them.
  list_subs() { "$@" --help | awk '/^Subcommands:/{f=1;next} f&&/^  [a-z]/{print $1}'; }
  for sub in $(list_subs "$BIN"); do
    echo
    echo "## inferscope $sub"
    echo
    echo '```'
    "$BIN" "$sub" --help
    echo '```'
    for subsub in $(list_subs "$BIN" "$sub"); do
      echo
      echo "### inferscope $sub $subsub"
      echo
      echo '```'
      "$BIN" "$sub" "$subsub" --help
      echo '```'
    done
  done
}
if [[ ${2:-} == --check ]]; then
  if ! diff -u "$3" <(render) >&2; then
    echo "docs/cli.md is stale: run scripts/gen-cli-doc.sh $BIN > docs/cli.md" >&2
    exit 1
  fi
else
  render
fi
