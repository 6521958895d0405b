#!/usr/bin/env bash
# The doc test: every command of the quick starts of README.md and README.zh-CN.md (the first ```bash block under
# "## Quick start" / "## 快速上手") runs, in a scratch folder laid out as a MiniMind learner's (out/*.pth,
# model/, a file of questions, a .jsonl of text), with `minigen` on the PATH:
#   minigen ...      exits 0 and prints something; a `--out DIR` it names holds report.md (in Chinese with --lang zh)
#   minigen serve &  answers /health within 60 s (its port is replaced by a free one, in the curl commands too)
#   curl ...         exits 0 and prints a completion ("choices")
#   python3 -c ...   runs with Debian's python3 and the module of this build (skipped when it was not built)
# Usage: quickstart_test.sh MINIGEN LEARNER_FIXTURE SOURCE_DIR [PYTHON_MODULE_DIR]
set -euo pipefail
minigen=$1 fixture=$2 source_dir=$3 python_dir=${4:-}

scratch=$(mktemp -d)
server_pid=
cleanup() {
  [[ -z $server_pid ]] || kill "$server_pid" 2>/dev/null || true
  rm -rf "$scratch"
}
trap cleanup EXIT

mkdir "$scratch/bin"
ln -s "$minigen" "$scratch/bin/minigen"
export PATH="$scratch/bin:$PATH"
"$fixture" "$source_dir" "$scratch"
printf '%s\n' '你好' '《静夜思》的作者是谁？' '什么是 KV 缓存？' >"$scratch/my-questions.txt"
printf '%s\n' '{"text": "床前明月光，疑是地上霜。举头望明月，低头思故乡。"}' \
  '{"text": "白日依山尽，黄河入海流。欲穷千里目，更上一层楼。"}' >"$scratch/my-text.jsonl"
port=$((20000 + RANDOM % 20000))

# The commands of one README's quick start, one per line (continuation lines joined, comments dropped).
quickstart_commands() {
  awk -v heading="$2" '
    $0 == heading { in_section = 1; next }
    in_section && /^## / { exit }
    in_section && /^```bash/ { in_block = 1; next }
    in_block && /^```/ { exit }
    in_block {
      line = $0
      sub(/^[ \t]+/, "", line)
      if (line == "" || line ~ /^#/) next
      if (line ~ /\\$/) { sub(/\\$/, "", line); pending = pending line; next }
      print pending line
      pending = ""
    }' "$1"
}

failures=0
fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}

run_command() {
  local command=$1 out
  command=${command//8080/$port}
  echo "\$ $command"
  case "$command" in
    "minigen serve"*"&")
      (cd "$scratch" && eval "exec ${command%&}") >"$scratch/serve.log" 2>&1 &
      server_pid=$!
      for _ in $(seq 600); do
        curl -sf "localhost:$port/health" >/dev/null 2>&1 && return
        sleep 0.1
      done
      fail "$command: no answer on /health within 60 s"
      cat "$scratch/serve.log" >&2
      ;;
    curl*)
      if ! out=$(cd "$scratch" && eval "$command") || [[ $out != *'"choices"'* ]]; then
        fail "$command: $out"
      fi
      echo "$out" | head -c 400
      echo
      ;;
    python3*)
      if [[ -z $python_dir || ! -d $python_dir ]]; then
        echo "(skipped: the Python module was not built)"
        return
      fi
      if ! out=$(cd "$scratch" && export PYTHONPATH="$python_dir" && eval "/usr/bin/${command}" 2>&1) || [[ -z $out ]]; then
        fail "$command: $out"
      fi
      echo "$out"
      ;;
    minigen*)
      if ! out=$(cd "$scratch" && eval "$command" 2>"$scratch/stderr") || [[ -z $out ]]; then
        fail "$command (exit or empty output): $out $(cat "$scratch/stderr")"
        return
      fi
      echo "$out" | head -n 20
      if [[ $command =~ --out\ ([^ ]+) ]]; then
        local report="$scratch/${BASH_REMATCH[1]}/report.md"
        if [[ ! -s $report ]]; then
          fail "$command: no ${BASH_REMATCH[1]}/report.md"
        elif [[ $command == *"--lang zh"* ]] && ! grep -q '首个 token 时间' "$report"; then
          fail "$command: ${BASH_REMATCH[1]}/report.md is not in Chinese (no 首个 token 时间)"
        elif [[ $command == *"--lang zh"* && $command != *"--prompt-text"* ]] &&
          ! grep -q 'examples/zh/poems.txt' "$report"; then
          fail "$command: the Chinese report ${BASH_REMATCH[1]}/report.md does not read the Chinese material"
        fi
      fi
      ;;
    *) fail "a quick-start line the doc test does not know how to run: $command" ;;
  esac
}

for readme in "README.md|## Quick start" "README.zh-CN.md|## 快速上手"; do
  file="$source_dir/${readme%%|*}"
  mapfile -t commands < <(quickstart_commands "$file" "${readme#*|}")
  echo "== ${readme%%|*}: ${#commands[@]} commands"
  # Each quick start is a learner's first run: the reports the other README's lab wrote are not there (`minigen lab`
  # refuses to replace a report without --force).
  rm -rf "$scratch"/lab-report* "$scratch/my-lab"
  # The quick start shows the shipped model, the lab, a .pth, Python and an OpenAI client: at least 7 lines.
  ((${#commands[@]} >= 7)) || fail "${readme%%|*}: only ${#commands[@]} commands found in its quick start"
  for command in "${commands[@]}"; do run_command "$command"; done
  if [[ -n $server_pid ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
  fi
done

if ((failures)); then
  echo "$failures quick-start command(s) failed" >&2
  exit 1
fi
echo "every quick-start command ran"
