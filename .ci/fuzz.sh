#!/usr/bin/env bash
# Runs every fuzz target in the module for a bounded time each (FUZZTIME,
# default 10s). Targets are found, not listed, so a new one is never missed.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-10s}"
tags="${TAGS:-nolibopusfile}"
found=0
while IFS=: read -r file name; do
  pkg="./$(dirname "$file")"
  found=$((found + 1))
  echo "fuzz: $pkg $name ($fuzztime)"
  go test -tags "$tags" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg"
done < <(grep -rHoE --include='*_test.go' '^func (Fuzz[A-Za-z0-9_]+)' --exclude-dir=node_modules . | sed -E 's#^\./##; s#:func #:#' | sort -u)
echo "fuzz: $found targets, $fuzztime each"
