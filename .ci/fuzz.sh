#!/usr/bin/env bash
# Runs every fuzz target in the module for a bounded budget each (FUZZTIME,
# default 20000x executions). Targets are found, not listed, so a new one is
# never missed. The budget is a count, not a duration: Go 1.26's fuzz
# coordinator can report a spurious "context deadline exceeded" failure when
# a duration ends while a worker is mid-run (golang/go#75804, fixed in 1.27);
# a count has no deadline to race. -timeout still bounds each run.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-20000x}"
tags="${TAGS:-nolibopusfile}"
found=0
while IFS=: read -r file name; do
  pkg="./$(dirname "$file")"
  found=$((found + 1))
  echo "fuzz: $pkg $name ($fuzztime)"
  go test -tags "$tags" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -timeout 5m "$pkg"
done < <(grep -rHoE --include='*_test.go' '^func (Fuzz[A-Za-z0-9_]+)' --exclude-dir=node_modules . | sed -E 's#^\./##; s#:func #:#' | sort -u)
echo "fuzz: $found targets, $fuzztime each"
