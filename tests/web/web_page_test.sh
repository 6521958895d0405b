#!/usr/bin/env bash
# The web page at `/` in a real browser: starts `minigen serve --port 0`, opens `/?autotest=PROMPT` in headless
# Chromium (driven by drive_page.pl over the DevTools pipe, in real time), waits until the page has streamed its
# greedy answer, and checks the page's DOM: data-autotest="done", a non-empty answer, at least one token, the first
# token's candidates with probabilities in (0, 1], positive tokens/s. Then asks the API the same question without
# streaming (temperature 0, same max_tokens) and requires the identical text. Then opens the page with a JSON schema
# (&schema=) and requires a JSON answer whose tokens carry grammar_allowed.
#
# usage: web_page_test.sh MINIGEN_BINARY
# Exit: 0 passed, 1 failed, 77 skipped (no chromium). Environment: CHROMIUM (the browser binary),
# MINIGEN_WEB_SCREENSHOT (write a PNG of the finished page there), PAGE_TIMEOUT (seconds, default 120).
set -uo pipefail

binary="${1:?usage: web_page_test.sh MINIGEN_BINARY}"
here="$(cd "$(dirname "$0")" && pwd)"
prompt="What does 'river' mean?"
prompt_in_url="What%20does%20'river'%20mean%3F"

chromium_binary="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
if [[ -z "$chromium_binary" || ! -x "$chromium_binary" ]]; then
  echo "SKIP: chromium is not installed (apt-get install chromium)"
  exit 77
fi

work="$(mktemp -d -t minigen-web-XXXXXX)"
server_pid=""
stop_server() {
  if [[ -n "$server_pid" ]]; then
    kill "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
    server_pid=""
  fi
  rm -rf "$work"
}
trap stop_server EXIT
trap 'exit 1' INT TERM HUP

fail() {
  echo "FAIL: $*" >&2
  if [[ -s "$work/server.log" ]]; then
    echo "--- server log (end)" >&2
    tail -n 15 "$work/server.log" >&2
  fi
  exit 1
}

start_seconds=$SECONDS
"$binary" serve --port 0 >"$work/server.log" 2>&1 &
server_pid=$!

# The server prints "listening on http://HOST:PORT" once the socket is bound.
port=""
for ((attempt = 0; attempt < 300; attempt++)); do
  port="$(sed -n 's|.*listening on http://[^ ]*:\([0-9][0-9]*\).*|\1|p' "$work/server.log" | head -n 1)"
  [[ -n "$port" ]] && break
  kill -0 "$server_pid" 2>/dev/null || fail "minigen serve exited before listening"
  sleep 0.1
done
[[ -n "$port" ]] || fail "minigen serve did not print its port within 30 s"
base="http://127.0.0.1:$port"
for ((attempt = 0; attempt < 100; attempt++)); do
  curl -sf "$base/health" >/dev/null && break
  sleep 0.1
done
curl -sf "$base/health" >/dev/null || fail "$base/health does not answer"
echo "server: $base (pid $server_pid)"

screenshot=()
[[ -n "${MINIGEN_WEB_SCREENSHOT:-}" ]] && screenshot=("$MINIGEN_WEB_SCREENSHOT")
perl "$here/drive_page.pl" "$chromium_binary" "$base/?autotest=$prompt_in_url" "$work/dom.html" "${screenshot[@]}" ||
  fail "the page did not finish in headless Chromium"

perl "$here/check_page.pl" result "$work/dom.html" "$prompt" >"$work/request.json" || fail "the page's result is wrong"
status="$(curl -s -o "$work/api.json" -w '%{http_code}' -H 'Content-Type: application/json' \
  --data-binary "@$work/request.json" "$base/v1/chat/completions")"
[[ "$status" == 200 ]] || fail "the non-streaming request answered HTTP $status: $(cat "$work/api.json")"
perl "$here/check_page.pl" compare "$work/dom.html" "$work/api.json" || fail "the page and the API disagree"

# The same page with a JSON schema (&schema=): the answer streams through the grammar, and the page reports the
# grammar's mask on its tokens.
schema_in_url="%7B%22type%22%3A%22object%22%2C%22properties%22%3A%7B%22answer%22%3A%7B%22type%22%3A%22string%22%2C%22maxLength%22%3A16%7D%7D%2C%22required%22%3A%5B%22answer%22%5D%7D"
perl "$here/drive_page.pl" "$chromium_binary" "$base/?autotest=$prompt_in_url&schema=$schema_in_url" "$work/schema.html" ||
  fail "the page with a JSON schema did not finish in headless Chromium"
perl "$here/check_page.pl" structured "$work/schema.html" answer || fail "the page's schema-constrained result is wrong"

# The server drains on SIGTERM and exits 0; a sanitizer report in its log (the ASan pass runs this test too) fails
# the test whatever the page showed.
kill -TERM "$server_pid"
wait "$server_pid"
server_status=$?
server_pid=""
if grep -q -e 'Sanitizer' -e 'runtime error:' "$work/server.log"; then
  cat "$work/server.log" >&2
  fail "the server's log holds a sanitizer report"
fi
[[ "$server_status" == 0 ]] || fail "minigen serve exited with $server_status after SIGTERM (expected 0)"

echo "PASS: the web page streamed a greedy answer identical to the API's ($((SECONDS - start_seconds)) s)"
