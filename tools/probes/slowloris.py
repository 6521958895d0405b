#!/usr/bin/env python3
"""Slow clients against `minigen serve`, measured: does /health keep answering, and does SIGTERM still exit?

Starts `minigen serve` on a free port, opens N connections that send a request's headers one byte per second,
probes GET /health every 0.25 s for the whole run and reports its latency, counts how the server ended the slow
connections, then sends SIGTERM while a fresh set of slow clients is connected and measures how long the process
takes to exit. Standard library only.

    python3 tools/probes/slowloris.py --minigen build/minigen --connections 200 --seconds 60
"""
import argparse
import re
import signal
import socket
import statistics
import subprocess
import threading
import time


def start_server(minigen):
    server = subprocess.Popen([minigen, "serve", "--port", "0", "--threads", "2"], stderr=subprocess.PIPE, text=True)
    for line in server.stderr:
        match = re.search(r"listening on http://[^:]+:(\d+)", line)
        if match:
            threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
            return server, int(match.group(1))
    raise SystemExit("minigen serve did not start")


def health_latency(port, timeout=5.0):
    start = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
            conn.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
        ok = data.startswith(b"HTTP/1.1 200")
    except OSError:
        ok = False
    return (time.monotonic() - start) if ok else None


def slow_client(port, stop, outcome):
    request = b"POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n" + b"X-Pad: " + b"a" * 400
    try:
        conn = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError:
        outcome.append(("refused", 0.0))
        return
    start = time.monotonic()
    conn.settimeout(1.0)
    for byte in request:
        if stop.is_set():
            outcome.append(("open at the end", time.monotonic() - start))
            return
        try:
            conn.sendall(bytes([byte]))
            data = conn.recv(4096)  # waits up to 1 s: a byte per second
            outcome.append(("answered " + data.split(b"\r\n")[0].decode(errors="replace") if data else "closed",
                            time.monotonic() - start))
            return
        except socket.timeout:
            continue
        except OSError:
            outcome.append(("reset", time.monotonic() - start))
            return
    outcome.append(("sent everything", time.monotonic() - start))


def run_slow_clients(port, connections, stop):
    outcome = []
    threads = [threading.Thread(target=slow_client, args=(port, stop, outcome)) for _ in range(connections)]
    for thread in threads:
        thread.start()
    return threads, outcome


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minigen", default="build/minigen")
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args()

    server, port = start_server(args.minigen)
    stop = threading.Event()
    threads, outcome = run_slow_clients(port, args.connections, stop)
    latencies, failures = [], 0
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        latency = health_latency(port)
        if latency is None:
            failures += 1
        else:
            latencies.append(latency)
        time.sleep(0.25)
    stop.set()
    for thread in threads:
        thread.join()
    print(f"{args.connections} slow connections (one header byte per second) for {args.seconds:.0f} s")
    print(f"/health: {len(latencies)} probes answered, {failures} failed; latency p50 "
          f"{statistics.median(latencies) * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms")
    kinds = {}
    for kind, seconds in outcome:
        kinds.setdefault(kind, []).append(seconds)
    for kind, times in sorted(kinds.items()):
        print(f"slow connections {kind}: {len(times)} (after {min(times):.1f}–{max(times):.1f} s)")

    # SIGTERM with a fresh crowd of slow clients connected: they must not keep the process alive.
    stop = threading.Event()
    threads, _ = run_slow_clients(port, args.connections, stop)
    time.sleep(2)
    sent = time.monotonic()
    server.send_signal(signal.SIGTERM)
    code = server.wait(timeout=120)
    print(f"SIGTERM with {args.connections} slow connections open: exited {code} after "
          f"{(time.monotonic() - sent) * 1000:.0f} ms")
    stop.set()
    for thread in threads:
        thread.join()


if __name__ == "__main__":
    main()
