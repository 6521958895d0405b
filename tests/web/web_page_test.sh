#!/usr/bin/env bash
# The web page at `/` in a real browser: starts `minigen serve --port 0`, opens `/?autotest=PROMPT` in headless
# Chromium (driven by drive_page.pl over the DevTools pipe, in real time), waits until the page has streamed its
# greedy answer, and checks the page's DOM: data-autotest="done", a non-empty answer, at least one token, the first
# token's candidates with their model and kept-set probabilities, positive tokens/s. Then asks the API the same
# question without streaming (temperature 0, same max_tokens) and requires the identical text. Languages: that run's
# browser prefers Chinese and the URL says ?lang=en, so the page must be in English; the JSON-schema run (&schema=,
# a JSON answer whose tokens carry grammar_allowed) has the Chinese browser and no ?lang, so it must be in Chinese.
# A third run, ?lang=zh with the repetition-penalty control at 1.8, must send 1.8, answer as the API does with 1.8
# and differently from the first run. In the first and third runs the mouse is moved onto the second token: the
# inspector must show its model probability and kept-set probability, labelled in the page's language.
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
perl "$here/drive_page.pl" --language=zh-CN --hover=1 "$chromium_binary" "$base/?lang=en&autotest=$prompt_in_url" \
  "$work/dom.html" "${screenshot[@]}" || fail "the page did not finish in headless Chromium"

# The page's greedy answer is the API's: asks the API the request check_page.pl printed (file $1) and compares.
same_as_api() {
  local dom="$1" request="$2" answer="$3"
  status="$(curl -s -o "$answer" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary "@$request" "$base/v1/chat/completions")"
  [[ "$status" == 200 ]] || fail "the non-streaming request answered HTTP $status: $(cat "$answer")"
  perl "$here/check_page.pl" compare "$dom" "$answer" || fail "the page and the API disagree"
}
perl "$here/check_page.pl" result "$work/dom.html" "$prompt" >"$work/request.json" || fail "the page's result is wrong"
same_as_api "$work/dom.html" "$work/request.json" "$work/api.json"
perl "$here/check_page.pl" language "$work/dom.html" en || fail "?lang=en did not keep the page in English"
perl "$here/check_page.pl" hover "$work/dom.html" en || fail "hovering a token did not show both probabilities"

# The same page with a JSON schema (&schema=): the answer streams through the grammar, and the page reports the
# grammar's mask on its tokens.
schema_in_url="%7B%22type%22%3A%22object%22%2C%22properties%22%3A%7B%22answer%22%3A%7B%22type%22%3A%22string%22%2C%22maxLength%22%3A16%7D%7D%2C%22required%22%3A%5B%22answer%22%5D%7D"
perl "$here/drive_page.pl" --language=zh-CN "$chromium_binary" "$base/?autotest=$prompt_in_url&schema=$schema_in_url" \
  "$work/schema.html" || fail "the page with a JSON schema did not finish in headless Chromium"
perl "$here/check_page.pl" structured "$work/schema.html" answer || fail "the page's schema-constrained result is wrong"
perl "$here/check_page.pl" language "$work/schema.html" zh || fail "a Chinese browser did not get the Chinese page"

# Chinese by ?lang=zh, with the repetition-penalty control set: the request carries it, and it changes the answer.
perl "$here/drive_page.pl" --hover=1 "$chromium_binary" \
  "$base/?lang=zh&repetition_penalty=1.8&autotest=$prompt_in_url" "$work/zh.html" ||
  fail "the Chinese page did not finish in headless Chromium"
perl "$here/check_page.pl" result "$work/zh.html" "$prompt" 1.8 >"$work/request-zh.json" ||
  fail "the Chinese page's result is wrong"
same_as_api "$work/zh.html" "$work/request-zh.json" "$work/api-zh.json"
perl "$here/check_page.pl" differs "$work/zh.html" "$work/dom.html" || fail "repetition penalty 1.8 changed nothing"
perl "$here/check_page.pl" language "$work/zh.html" zh || fail "?lang=zh did not give the Chinese page"
perl "$here/check_page.pl" hover "$work/zh.html" zh || fail "hovering a token on the Chinese page is wrong"

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

echo "PASS: the web page streamed greedy answers identical to the API's, in English and Chinese, with and without" \
  "the repetition penalty ($((SECONDS - start_seconds)) s)"
