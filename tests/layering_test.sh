#!/usr/bin/env bash
# Checks that the #include arrows between the parts of a module point one way
# (ctest dataset_layering and hpo_layering; docs/engineering.md, "Layout").
#
# usage: layering_test.sh ROOT RULE...
#        layering_test.sh --self-test
# A RULE is "SCAN...:FORBIDDEN...": paths relative to ROOT (directories are
# read recursively; a SCAN path prefixed with "-" is left out), then the path
# prefixes their files must not include. Each include is resolved as the
# compiler resolves it in this tree: "xwires/..." under include/, a bare name
# next to the including file when it exists there, anything else from ROOT
# ("dataset/store/sqlite_adapter.h"); a bare name found nowhere next to the
# file counts as the forbidden file of that name, if any. Exit status 1 names
# every include that points back; 2 for a bad command line.
set -u

check() {
  local root=$1 rule=$2 bad=0
  local scan=${rule%%:*} forbidden=${rule#*:}
  if [[ $rule != *:* || -z $forbidden ]]; then
    echo "layering_test.sh: bad rule '$rule' (want 'SCAN...:FORBIDDEN...')" >&2
    return 2
  fi
  local -a paths=() skip=()
  local p
  for p in $scan; do
    if [[ $p == -* ]]; then skip+=("${p#-}"); else paths+=("$p"); fi
  done
  local file rel dir lineno inc resolved f s skipped
  for p in "${paths[@]}"; do
    if [[ ! -e $root/$p ]]; then
      echo "layering_test.sh: $root/$p does not exist" >&2
      return 2
    fi
  done
  while IFS= read -r file; do
    rel=${file#"$root"/}
    skipped=0
    for s in "${skip[@]+"${skip[@]}"}"; do
      [[ $rel == "$s" || $rel == "$s"/* ]] && skipped=1
    done
    ((skipped)) && continue
    dir=$(dirname "$rel")
    while IFS=: read -r lineno inc; do
      inc=${inc#*[\"<]}
      inc=${inc%%[\">]*}
      if [[ $inc == xwires/* ]]; then
        resolved=include/$inc
      elif [[ $inc != */* && -e $root/$dir/$inc ]]; then
        resolved=$dir/$inc
      elif [[ $inc != */* ]]; then
        # A bare name found through some include path: the forbidden file of
        # that name if there is one.
        resolved=$inc
        for f in $forbidden; do
          [[ -d $root/$f ]] || continue
          s=$(find "$root/$f" -type f -name "$inc" -print -quit)
          [[ -n $s ]] && resolved=${s#"$root"/}
        done
      else
        resolved=$inc
      fi
      for f in $forbidden; do
        if [[ $resolved == "$f" || $resolved == "$f"/* ]]; then
          echo "$rel:$lineno: includes \"$inc\" ($resolved): $scan must not depend on $f"
          bad=1
        fi
      done
    done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' "$file")
  done < <(find "${paths[@]/#/$root/}" -type f \( -name '*.h' -o -name '*.cc' \) | sort)
  return $bad
}

run() {
  local root=$1 status=0 rule rc
  shift
  for rule in "$@"; do
    check "$root" "$rule"
    rc=$?
    ((rc > status)) && status=$rc
  done
  return $status
}

self_test() {
  # A tree whose lower part includes the upper one (by path, through
  # include/xwires/, by bare name) must fail naming each include; the same
  # tree without them must pass.
  local t
  t=$(mktemp -d) || return 2
  trap 'rm -rf "$t"' RETURN
  mkdir -p "$t/m/low" "$t/m/high" "$t/include/xwires/m/high"
  echo '#include "low.h"' > "$t/m/low/low.cc"
  : > "$t/m/low/low.h"
  : > "$t/m/high/high.h"
  : > "$t/include/xwires/m/high/api.h"
  echo '#include "m/low/low.h"' > "$t/m/high/high.cc"
  local rule="m/low:m/high include/xwires/m/high"
  if ! out=$(run "$t" "$rule"); then
    echo "self-test: a clean tree failed: $out"
    return 1
  fi
  printf '%s\n' '#include "m/high/high.h"' '#include <xwires/m/high/api.h>' \
      '#include "high.h"' >> "$t/m/low/low.cc"
  out=$(run "$t" "$rule")
  if [[ $? -ne 1 || $(grep -c 'must not depend' <<< "$out") -ne 3 ]]; then
    echo "self-test: three back-pointing includes not all reported: $out"
    return 1
  fi
  echo "self-test passed"
}

if [[ ${1:-} == --self-test ]]; then
  self_test
  exit
fi
if (($# < 2)); then
  echo "usage: layering_test.sh ROOT RULE... | --self-test" >&2
  exit 2
fi
root=${1%/}
shift
run "$root" "$@"
status=$?
((status == 0)) && echo "layering: every include points one way"
exit $status
