#!/usr/bin/env bash
# Aggregate throughput of N `minigen serve` replicas behind nginx (this folder's nginx.conf), N = 1, 2, 3 with one
# thread each, and for comparison one replica with two threads (one process using both cores):
#   bash deploy/nginx/bench_replicas.sh [BUILD_DIR]        (default build/; needs Debian's nginx)
# Each replica gets one thread; the load is `minigen bench-serve` through nginx (decode-bound comparison included).
set -euo pipefail
cd "$(dirname "$0")/../.."
minigen="${1:-build}/minigen"
[[ -x "$minigen" ]] || { echo "no minigen binary at $minigen (build first)" >&2; exit 2; }
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || { echo "nginx is not installed (apt-get install nginx)" >&2; exit 2; }
nginx_binary=$(command -v nginx || echo /usr/sbin/nginx)
work=$(mktemp -d)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

for setup in 1 2 3 1x2; do
  replicas=${setup%x2}
  threads=1
  [[ "$setup" == *x2 ]] && threads=2
  mkdir -p "$work/$setup/tmp"
  config="$work/$setup/nginx.conf"
  sed -e "s/listen 127.0.0.1:8080;/listen 127.0.0.1:18380;/" deploy/nginx/nginx.conf > "$config"
  for i in 1 2 3; do
    if ((i <= replicas)); then
      "$minigen" serve --port $((18380 + i)) --threads "$threads" 2>"$work/$setup/replica$i.log" &
      pids+=($!)
      sed -i "s/127.0.0.1:808$i /127.0.0.1:$((18380 + i)) /" "$config"
    else
      sed -i "/127.0.0.1:808$i /d" "$config"
    fi
  done
  "$nginx_binary" -p "$work/$setup" -c "$config" 2>"$work/$setup/nginx.log" &
  pids+=($!)
  sleep 2
  echo "== $replicas replica(s) behind nginx, $threads thread(s) each =="
  "$minigen" bench-serve --url http://127.0.0.1:18380 --requests 200 --concurrency 32 --compare-sequential 32 \
    | grep -E "^(wall time|throughput|TTFT|latency|errors|result)|at a time"
  kill "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  pids=()
done
