#!/usr/bin/env python3
"""Issue 25's two numbers against a running `minigen serve`: how long one hostile schema request takes, and the
inter-token time of a plain streamed completion alone and while schema requests run beside it.

    build/minigen serve --port 8091 &
    python3 scripts/measure_schema_neighbours.py 8091 ["enum of 1000" ...]

Names after the port keep only the schemas whose name contains one of them.
"""
import http.client
import json
import statistics
import sys
import threading
import time

PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 8091


def post(body, timeout=600):
    connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    connection.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    text = response.read()
    connection.close()
    return response.status, text


def schema_body(schema, max_tokens=8):
    return {"messages": [{"role": "user", "content": "Give me JSON."}], "max_tokens": max_tokens,
            "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}}


def neighbour_gaps(tokens=120):
    """Milliseconds between the streamed tokens of a plain completion."""
    connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=600)
    body = {"prompt": "In the beginning", "max_tokens": tokens, "ignore_eos": True, "stream": True, "seed": 1}
    connection.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    stamps = []
    while True:
        line = response.readline()
        if not line:
            break
        if line.startswith(b"data: {"):
            stamps.append(time.perf_counter())
        if line.startswith(b"data: [DONE]"):
            break
    connection.close()
    return [(b - a) * 1000 for a, b in zip(stamps[1:], stamps[2:])]


def report(name, gaps):
    print(f"  {name:64s} median {statistics.median(gaps):7.3f} ms  mean {statistics.mean(gaps):7.3f} ms  "
          f"p90 {sorted(gaps)[int(0.9 * (len(gaps) - 1))]:7.3f} ms  max {max(gaps):8.3f} ms")


SCHEMAS = {
    "type: [string] x 20000": {"type": ["string"] * 20000},
    "anyOf of 20000 distinct consts": {"anyOf": [{"const": f"k{i}"} for i in range(20000)]},
    "enum of 20000 distinct strings": {"enum": [f"value-{i}" for i in range(20000)]},
    # Inside both budgets: after the opening quote all 1,000 values are alive, so a mask that misses the cache
    # costs about 336,000 matcher steps (10-20 ms), and each value's states are new ones.
    "enum of 1000 distinct strings": {"enum": [f"value-{i}" for i in range(1000)]},
    "anyOf of 2000 strings, distinct maxLength": {"anyOf": [{"type": "string", "maxLength": 100 + i}
                                                            for i in range(2000)]},
    # Inside the compile budget, but 1,000 unbounded-ish strings stay alive: over the mask's step budget.
    "anyOf of 1000 strings, distinct maxLength": {"anyOf": [{"type": "string", "maxLength": 100 + i}
                                                            for i in range(1000)]},
}


def main():
    if len(sys.argv) > 2:
        for name in [name for name in SCHEMAS if not any(part in name for part in sys.argv[2:])]:
            del SCHEMAS[name]
    post({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2})  # warm up
    print("schema requests alone (max_tokens 8):")
    for name, schema in SCHEMAS.items():
        start = time.perf_counter()
        status, text = post(schema_body(schema))
        seconds = time.perf_counter() - start
        message = json.loads(text).get("error", {}).get("message", "") if status != 200 else "done"
        print(f"  {name:44s} {seconds:8.3f} s  HTTP {status}  {message[:110]}")

    print("neighbour inter-token time (120 streamed tokens):")
    alone = [g for _ in range(3) for g in neighbour_gaps()]
    report("alone", alone)
    for name, schema in SCHEMAS.items():
        stop = threading.Event()

        def hammer():
            while not stop.is_set():
                post(schema_body(schema, max_tokens=64))

        threads = [threading.Thread(target=hammer)]
        for thread in threads:
            thread.start()
        time.sleep(0.2)
        beside = [g for _ in range(3) for g in neighbour_gaps()]
        stop.set()
        for thread in threads:
            thread.join()
        report("beside a client looping on " + name, beside)


if __name__ == "__main__":
    main()
