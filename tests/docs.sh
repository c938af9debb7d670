#!/usr/bin/env bash
# tests/docs.sh GRADSIM SRC: the README's and docs/'s commands, run as
# shown, and the outputs they show compared with what gradsim prints
# (docs/testing.md, "The manual's commands"). What a page shows:
#
# - a ```sh block: commands; each line (a line ending in \ or | goes on)
#   must exit 0, run in order in one scratch directory per page, where
#   build/gradsim is GRADSIM and the source tree's experiments/, models/,
#   platforms/ and plots/ are at hand. `./dev.sh` lines are CI's own
#   (.ci/run runs them). A `gradsim run` whose estimate exceeds
#   LONG_S seconds runs with --estimate instead (which reads every point:
#   keys, model, platform), and the lines after it that read its results
#   (results/NAME) are not run.
# - a ``` block whose lines begin with `$ `: a transcript; each command's
#   output (standard output and error) must be the lines shown under it.
# - a ```text block of `build/gradsim CMD ...` synopses: every --option
#   must be one that `gradsim CMD --help` lists.
# - `<!-- docs-test: output of CMD -->` before a ``` block: CMD's output
#   holds the block's lines, in order (`...` stands for any lines).
# - `<!-- docs-test: skip REASON -->` before a block: not run.
set -u
G=$(realpath "$1")
SRC=$(realpath "$2")
LONG_S=30
npass=0
nfail=0
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pass() { npass=$((npass + 1)); echo "ok   - $1"; }
fail() {
  nfail=$((nfail + 1))
  echo "FAIL - $1"
  shift
  local line
  for line in "$@"; do printf '%s\n' "$line" | sed 's/^/       /'; done
}

# A page's scratch directory.
scratch() {
  local d=$W/$1
  mkdir -p "$d/build"
  ln -sf "$G" "$d/build/gradsim"
  for x in experiments models platforms plots; do ln -sfn "$SRC/$x" "$d/$x"; done
  echo "$d"
}

# run_in DIR CMD: CMD in DIR under bash (pipefail), output to $W/out;
# a writer stopped by its reader (`| head`: SIGPIPE, 141) is no failure.
run_in() {
  local rc
  (cd "$1" && timeout 600 bash -o pipefail -c "$2") >"$W/out" 2>&1
  rc=$?
  [ "$rc" -eq 141 ] && rc=0
  return "$rc"
}

# The blocks of PAGE, one record each: KIND, its first line's number,
# its marker's text, and its lines joined by \036 (continuations joined
# into one line for sh blocks).
blocks() {
  awk '
    function flush() {
      if (kind != "") printf "%s\037%d\037%s\037%s\n", kind, start, mark, body
      kind = ""; body = ""
    }
    /^<!-- docs-test: / { m = $0; sub(/^<!-- docs-test: /, "", m); sub(/ -->$/, "", m); pend = m; next }
    /^```/ {
      if (inb) { inb = 0; flush(); next }
      inb = 1; lang = substr($0, 4); start = FNR + 1; mark = pend; pend = ""
      kind = lang == "sh" ? "sh" : lang == "text" ? "text" : "plain"
      if (mark ~ /^skip/) kind = "skip"
      else if (mark ~ /^output of /) kind = "output"
      cont = 0
      next
    }
    inb {
      line = $0
      if (kind == "sh" && cont) { body = body " " line }
      else body = body (body == "" ? "" : "\036") line
      cont = kind == "sh" && (line ~ /\\$/ || line ~ /\|[ \t]*$/)
      if (cont) sub(/\\$/, "", body)
      next
    }
    { pend = "" }
    END { flush() }
  ' "$1"
}

# The seconds the estimate of a `gradsim run` command gives (0: none).
estimate_s() {
  local d=$1 cmd=$2
  run_in "$d" "$cmd --estimate" || { echo 0; return; }
  awk '/^ *[0-9]+ +[0-9.]+ / { s += $2 } END { printf "%.0f\n", s }' "$W/out"
}

sh_block() { # PAGE LINE BODY DIR
  local page=$1 at=$2 body=$3 d=$4 cmd n=0 estimated=""
  while IFS= read -r cmd; do
    n=$((n + 1))
    case "$cmd" in '' | '#'*) continue ;; esac
    local name="$page:$at: $cmd"
    case "$cmd" in
      ./dev.sh*) continue ;;
    esac
    if [ -n "$estimated" ] && [[ "$cmd" == *"$estimated"* ]]; then
      pass "$name (not run: reads the results of a run only estimated)"
      continue
    fi
    if [[ "$cmd" =~ ^build/gradsim\ run\  ]] && [[ "$cmd" != *--estimate* ]] &&
       [[ "$cmd" != *--list-points* ]]; then
      local s
      s=$(estimate_s "$d" "$cmd")
      if [ "$s" -gt "$LONG_S" ]; then
        if run_in "$d" "$cmd --estimate"; then
          pass "$name (estimated, ${s} s: --estimate run instead)"
        else
          fail "$name" "--estimate exited $?" "$(head -c 600 "$W/out")"
        fi
        local exp=${cmd#build/gradsim run }
        exp=${exp%% *}
        estimated="results/$(basename "$exp" .ini)"
        continue
      fi
    fi
    if run_in "$d" "$cmd"; then
      pass "$name"
    else
      fail "$name" "exit status $?" "$(head -c 600 "$W/out")"
    fi
  done < <(printf '%s\n' "$body" | tr '\036' '\n')
}

transcript() { # PAGE LINE BODY DIR
  local page=$1 at=$2 body=$3 d=$4 line cmd="" want=""
  check_one() {
    [ -z "$cmd" ] && return
    run_in "$d" "$cmd"
    if diff <(printf '%s' "$want") "$W/out" >"$W/diff"; then
      pass "$page:$at: \$ $cmd (output as shown)"
    else
      fail "$page:$at: \$ $cmd (output as shown)" "$(head -20 "$W/diff")"
    fi
  }
  while IFS= read -r line; do
    if [[ "$line" == '$ '* ]]; then
      check_one
      cmd=${line#\$ }
      want=""
    else
      want+="$line"$'\n'
    fi
  done < <(printf '%s\n' "$body" | tr '\036' '\n')
  check_one
}

output_block() { # PAGE LINE MARK BODY DIR
  local page=$1 at=$2 cmd=${3#output of } body=$4 d=$5
  local name="$page:$at: the output of $cmd as shown"
  if ! run_in "$d" "$cmd"; then
    fail "$name" "exit status $?" "$(head -c 600 "$W/out")"
    return
  fi
  # Each shown line in order, `...` skipping any lines; spaces squeezed.
  printf '%s\n' "$body" | tr '\036' '\n' | tr -s ' ' >"$W/want"
  tr -s ' ' <"$W/out" >"$W/got"
  if awk 'NR == FNR { w[++n] = $0; next }
          i < n && w[i + 1] == "..." { i++ }
          i < n && $0 == w[i + 1] { i++; while (i < n && w[i + 1] == "...") i++ }
          END { exit !(i == n) }' "$W/want" "$W/got"; then
    pass "$name"
  else
    fail "$name" "shown:" "$(cat "$W/want")" "printed:" "$(head -20 "$W/got")"
  fi
}

synopsis() { # PAGE LINE BODY
  local page=$1 at=$2 body=$3 line sub opt
  while IFS= read -r line; do
    # A line that begins with a space goes on with the last command.
    if [[ "$line" =~ ^build/gradsim\ ([a-z]+) ]]; then
      sub=${BASH_REMATCH[1]}
      "$G" "$sub" --help >"$W/help" 2>&1
    elif [[ "$line" != ' '* ]] || [ -z "${sub:-}" ]; then
      continue
    fi
    for opt in $(grep -o -- '--[a-z][a-z-]*' <<<"$line" | sort -u); do
      if grep -q -- "$opt" "$W/help"; then
        pass "$page:$at: gradsim $sub $opt"
      else
        fail "$page:$at: gradsim $sub $opt" "not in gradsim $sub --help"
      fi
    done
  done < <(printf '%s\n' "$body" | tr '\036' '\n')
}

cd "$SRC" || exit 2
for page in README.md docs/*.md; do
  d=$(scratch "$(basename "$page" .md)")
  while IFS=$'\037' read -r kind at mark body; do
    case "$kind" in
      sh) sh_block "$page" "$at" "$body" "$d" ;;
      output) output_block "$page" "$at" "$mark" "$body" "$d" ;;
      text) synopsis "$page" "$at" "$body" ;;
      plain) [[ "$body" == '$ '* ]] && transcript "$page" "$at" "$body" "$d" ;;
    esac
  done < <(blocks "$page")
done
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
