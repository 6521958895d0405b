#!/usr/bin/env python3
"""The doc test: every command block of README.md, README.zh-CN.md and docs/*.md runs, from a folder outside the
checkout, against minigen installed (`cmake --install`) into a scratch prefix, with that prefix's bin first on the PATH.

Which fences are commands (the docs mark them so):
  ```bash / ```sh     each command runs (continuation lines joined, `#` comment lines dropped)
  ```console          a transcript: each `$ ` line (with its indented continuation lines) runs, and the lines under it
                      are its output, checked: numbers are masked (timings differ), `…` stands for anything, lines
                      may be left out or wrapped; an output with `minigen: error:` (or `minigen：错误：`) means exit status 1
  ```python           a `>>>` session runs line by line (output checked as a transcript's); another python block runs
                      as a script, or is saved under the name its marker gives (<!-- doc-test: file example.py -->)
  ``` / ```text       not commands (output, tables, listings); a bare block holding a `$ `, `>>> ` or `minigen ` line
                      fails the test: it must be marked one way or the other
Markers, an HTML comment on the line before the fence:
  <!-- doc-test: skip (REASON) -->     not run (a MiniMind checkout, llama.cpp, the build script itself); the test
                                       prints each skipped block with its reason, and counts them
  <!-- doc-test: in the checkout (…) --> the block names files of the checkout's tests/data: the scratch folder gets a
                                       link to the checkout's tests/ (the rest stays outside the checkout)
Each doc runs in its own scratch folder laid out as a MiniMind learner's (out/*.pth, model/, out/lora/, dataset/,
my-questions.txt, my-text.jsonl; written by minigen_learner_fixture), as the reader would type the commands top to
bottom: a command already run in the same doc is not run again (its output is checked against the later transcript).
`minigen serve` (with or without `&`: a server in another terminal) runs in the background on a free port (the doc's
port is replaced in every later command of the doc), the test waits for /health; a second server on the same port
replaces the first; each server's log is checked against the output under its `$ minigen serve` line when it stops.
`python3` is Debian's /usr/bin/python3 with the installed module on PYTHONPATH (skipped, with the reason printed,
when the module was not built). `minigen lab` without --quick gets --quick (the full lab takes two minutes).
Kept from the quick-start test: each quick start has at least 7 commands; a `minigen ... --out DIR` writes DIR/report.md
(in Chinese with --lang zh, from the Chinese material unless --prompt-text); curl of a completion prints "choices".

Usage: doc_commands_test.py CMAKE BUILD_DIR LEARNER_FIXTURE SOURCE_DIR
"""
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

cmake, build_dir, fixture, source_dir = sys.argv[1:5]
scratch = tempfile.mkdtemp(prefix="minigen-doc-test-")
prefix = os.path.join(scratch, "prefix")
failures = []
skipped = []
counts = {"blocks run": 0, "commands run": 0, "outputs checked": 0}
servers = {}  # doc port -> (process, free port, log path, expected log lines, command)

NUMBER = r"-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?"
MARKER = re.compile(r"<!--\s*doc-test:\s*(skip|in the checkout|file)\s*(.*?)\s*-->")


def fail(message):
    print(f"FAILED: {message}", flush=True)
    failures.append(message)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def output_pattern(lines):
    """The regex the output under a command must match (searched in the actual output)."""
    parts = []
    for line in lines:
        text = line.strip()
        if not text or text == "…":
            continue
        piece = ""
        for token in re.split(rf"(…|{NUMBER}|\s+)", text):
            if not token:
                continue
            if token == "…":
                piece += ".*?"
            elif token.isspace():
                piece += r"\s+"
            elif re.fullmatch(NUMBER, token):
                piece += NUMBER
            else:
                piece += re.escape(token)
        parts.append(piece)
    # Between two lines of the doc: a wrapped line (only whitespace) or lines the doc leaves out.
    return r"\s*(?:[^\n]*\n\s*)*?".join(parts)


def check_output(what, expected, actual):
    actual = actual.replace(prefix, "/usr/local")  # the docs show the default prefix
    if not any(line.strip() and line.strip() != "…" for line in expected):
        return
    counts["outputs checked"] += 1
    if not re.search(output_pattern(expected), actual):
        # Name the first line of the doc's output that is not there.
        for i in range(1, len(expected) + 1):
            if not re.search(output_pattern(expected[:i]), actual):
                fail(f"{what}: the output does not match the doc from its line\n    {expected[i - 1].strip()}\n"
                     f"  actual output:\n{indent(actual)}")
                return


def indent(text, limit=60):
    lines = text.rstrip("\n").split("\n")
    shown = lines[:limit] + ([f"… ({len(lines) - limit} more lines)"] if len(lines) > limit else [])
    return "\n".join("    | " + line for line in shown)


def blocks(path):
    """(line, info, marker kind, marker text, lines) for each fenced block of a Markdown file."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i, result = 0, []
    while i < len(lines):
        if lines[i].startswith("```"):
            info = lines[i][3:].strip()
            start, body = i, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            marker = MARKER.search(lines[start - 1]) if start > 0 else None
            result.append((start + 1, info, marker.group(1) if marker else None,
                           marker.group(2).strip("() ") if marker else "", body))
        i += 1
    return result


def bash_commands(body):
    commands, pending = [], ""
    for raw in body:
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        commands.append((pending + line, []))
        pending = ""
    return commands


def console_commands(body):
    """[(command, output lines)] of a transcript: `$ ` lines; indented lines after an unfinished one continue it."""
    commands = []
    for line in body:
        if line.startswith("$ "):
            commands.append([line[2:], []])
        elif commands and not commands[-1][1] and line.startswith("    ") and unfinished(commands[-1][0]):
            commands[-1][0] += "\n" + line
        elif commands:
            commands[-1][1].append(line)
    return [(command, output) for command, output in commands]


def unfinished(command):
    check = subprocess.run(["bash", "-n", "-c", command], capture_output=True)
    return command.rstrip().endswith("\\") or check.returncode != 0


class Doc:
    def __init__(self, name):
        self.name = name
        self.folder = os.path.join(scratch, "docs", name.replace("/", "_"))
        shutil.copytree(os.path.join(scratch, "learner"), self.folder, symlinks=True)
        self.ports = {}  # the doc's port -> the free one
        self.outputs = {}  # command -> (status, output) of a command already run in this doc
        self.assignments = []  # `H=...; J=...` lines, for the later commands of the doc

    def substitute(self, command):
        for doc_port, port in self.ports.items():
            command = re.sub(rf"\b{doc_port}\b", str(port), command)
        return command


def environment():
    env = dict(os.environ)
    env["PATH"] = f"{prefix}/bin:{scratch}/bin:{env['PATH']}"
    env["PYTHONPATH"] = python_dir or ""
    env.pop("MINIGEN_HOME", None)
    return env


def run_shell(doc, command, timeout=300):
    script = "\n".join(doc.assignments + [command])
    try:
        done = subprocess.run(["bash", "-c", script], cwd=doc.folder, env=environment(), stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
        return done.returncode, done.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as error:
        return "timeout", (error.stdout or b"").decode("utf-8", "replace")


def start_server(doc, where, command, expected):
    command = command.rstrip().rstrip("&").rstrip()
    match = re.search(r"--port\s+(\d+)", command)
    doc_port = int(match.group(1)) if match else 8080
    stop_server(doc, doc_port)
    port = free_port()
    doc.ports[doc_port] = port
    command = re.sub(r"--port\s+\d+", f"--port {port}", command) if match else f"{command} --port {port}"
    print(f"$ {command}    (in the background; {doc_port} → {port})", flush=True)
    log = os.path.join(doc.folder, f"serve-{doc_port}.log")
    process = subprocess.Popen(["bash", "-c", "\n".join(doc.assignments + ["exec " + command])], cwd=doc.folder,
                               env=environment(), stdin=subprocess.DEVNULL, stdout=open(log, "wb"),
                               stderr=subprocess.STDOUT)
    servers[(doc.name, doc_port)] = (process, port, log, expected, f"{where}: {command}")
    deadline = time.time() + 60
    while time.time() < deadline:
        if process.poll() is not None:
            break
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
            return
        except OSError:
            time.sleep(0.1)
    fail(f"{where}: {command}: no answer on /health within 60 s\n{indent(open(log).read())}")


def stop_server(doc, doc_port):
    entry = servers.pop((doc.name, doc_port), None)
    if entry is None:
        return
    process, _, log, expected, what = entry
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    check_output(f"{what} (its log)", expected, open(log, encoding="utf-8", errors="replace").read())


def run_command(doc, where, command, expected, quick_start=False):
    command = doc.substitute(command)
    shown = command.replace("\n", "\n  ")
    if re.fullmatch(r"""(\s*[A-Za-z_]\w*=('[^']*'|"[^"]*"|[^\s;'"]*)\s*;?)+\s*""", command):  # H='...'; J='...': kept for the later commands of the doc
        print(f"$ {shown}", flush=True)
        doc.assignments.append(command)
        return
    if re.match(r"minigen serve\b", command):
        start_server(doc, where, command, expected)
        counts["commands run"] += 1
        return
    if re.search(r"(^|\s)python3?\s", command) and not python_dir:
        skipped.append((where, command, "the Python module was not built (pybind11-dev, python3-dev)"))
        return
    if re.match(r"minigen lab\b", command) and "--quick" not in command:
        command += " --quick"
        print("(the test adds --quick: the full lab takes two minutes)", flush=True)
    if re.match(r"minigen perplexity\b.*--jsonl examples/heldout.jsonl", command):
        # The command as written, on a shorter file of the same name here (the whole one takes over a minute, twice).
        os.makedirs(os.path.join(doc.folder, "examples"), exist_ok=True)
        with open(os.path.join(source_dir, "examples/heldout.jsonl"), encoding="utf-8") as f:
            head = f.readlines()[:300]
        open(os.path.join(doc.folder, "examples/heldout.jsonl"), "w", encoding="utf-8").writelines(head)
        print("(examples/heldout.jsonl here holds the first 300 of the shipped file's documents: the whole one takes "
              "over a minute)", flush=True)
    key = " ".join(command.split())
    if key in doc.outputs:
        status, output = doc.outputs[key]
        print(f"$ {shown}    (ran above in this doc; its output is checked)", flush=True)
    else:
        print(f"$ {shown}", flush=True)
        started = time.time()
        status, output = run_shell(doc, command)
        doc.outputs[key] = (status, output)
        counts["commands run"] += 1
        print(indent(output, 12) + f"\n    ({time.time() - started:.1f} s, exit {status})", flush=True)
    want = 1 if any(line.startswith(("minigen: error:", "minigen：错误：")) for line in expected) else 0
    if status != want:
        fail(f"{where}: {command}: exit {status}, the doc says {want}\n{indent(output)}")
        return
    check_output(f"{where}: {command}", expected, output)
    if command.startswith("minigen") and not output.strip():
        fail(f"{where}: {command}: printed nothing")
    if re.match(r"curl\b.*/v1/(chat/)?completions", command) and not expected and '"choices"' not in output:
        fail(f"{where}: {command}: no completion (\"choices\") in {output!r}")
    if re.match(r"python3?\s+-c", command) and not output.strip():
        fail(f"{where}: {command}: printed nothing")
    match = re.search(r"--out\s+(\S+)", command)
    if command.startswith("minigen lab") and match:
        report = os.path.join(doc.folder, match.group(1), "report.md")
        text = open(report, encoding="utf-8").read() if os.path.exists(report) else ""
        if not text:
            fail(f"{where}: {command}: no {match.group(1)}/report.md")
        elif "--lang zh" in command and "首个 token 时间" not in text:
            fail(f"{where}: {command}: {match.group(1)}/report.md is not in Chinese (no 首个 token 时间)")
        elif "--lang zh" in command and "--prompt-text" not in command and "examples/zh/poems.txt" not in text:
            fail(f"{where}: {command}: the Chinese report does not read the Chinese material")


PYTHON_SESSION = r'''
import sys, traceback
source = open(sys.argv[1], encoding="utf-8").read().split("\n")
statements, current = [], None
for line in source:
    if line.startswith(">>> "):
        current = [line[4:]]
        statements.append(current)
    elif line.startswith("... ") and current is not None:
        current.append(line[4:])
namespace = {}
for statement in statements:
    try:
        exec(compile("\n".join(statement) + "\n", "<doc>", "single"), namespace)
    except Exception as error:
        module = type(error).__module__
        name = type(error).__name__ if module == "builtins" else f"{module}.{type(error).__name__}"
        print(f"{name}: {error}")
    sys.stdout.flush()
'''


def run_python_block(doc, where, body, marker, marker_text):
    if marker == "file":
        with open(os.path.join(doc.folder, marker_text), "w", encoding="utf-8") as f:
            f.write("\n".join(body) + "\n")
        print(f"(saved as {marker_text})", flush=True)
        return
    if not python_dir:
        skipped.append((where, "python block", "the Python module was not built (pybind11-dev, python3-dev)"))
        return
    counts["commands run"] += 1
    text = "\n".join(body) + "\n"
    if any(line.startswith(">>> ") for line in body):
        session = os.path.join(doc.folder, "session.txt")
        open(session, "w", encoding="utf-8").write(text)
        runner = os.path.join(scratch, "python_session.py")
        open(runner, "w").write(PYTHON_SESSION)
        status, output = run_shell(doc, f"/usr/bin/python3 {runner} {session}")
        print(indent(output, 20), flush=True)
        expected = [line for line in body if not line.startswith((">>> ", "... "))]
        if status != 0:
            fail(f"{where}: the Python session exited {status}\n{indent(output)}")
        check_output(f"{where}: the Python session", expected, output)
    else:
        script = os.path.join(doc.folder, "block.py")
        open(script, "w", encoding="utf-8").write(text)
        status, output = run_shell(doc, f"/usr/bin/python3 {script}")
        print(indent(output, 20), flush=True)
        if status != 0:
            fail(f"{where}: the Python block exited {status}\n{indent(output)}")


def run_doc(name):
    path = os.path.join(source_dir, name)
    doc = None
    quick_start_commands = 0
    heading = ""
    with open(path, encoding="utf-8") as f:
        headings = [(i + 1, line) for i, line in enumerate(f.read().split("\n")) if line.startswith("## ")]
    for line, info, marker, marker_text, body in blocks(path):
        where = f"{name}:{line}"
        heading = next((h for n, h in reversed(headings) if n < line), "")
        kind = info.split()[0] if info else ""
        if kind in ("", "text"):
            unmarked = [l for l in body if l.startswith(("$ ", ">>> ", "minigen "))]
            if unmarked and kind == "":
                fail(f"{where}: a bare ``` block holds commands ({unmarked[0]!r}): mark it ```bash, ```console "
                     "or ```python (or ```text if it is not to be run)")
            continue
        if kind not in ("bash", "sh", "console", "python"):
            continue
        if marker == "skip":
            first = next((l.strip() for l in body if l.strip() and not l.strip().startswith("#")), "")
            skipped.append((where, first.removeprefix("$ "), marker_text))
            continue
        if doc is None:
            print(f"\n======== {name}", flush=True)
            doc = Doc(name)
        print(f"---- {where} ```{info}" + (f"  [{marker}: {marker_text}]" if marker else ""), flush=True)
        counts["blocks run"] += 1
        if marker == "in the checkout" and not os.path.exists(os.path.join(doc.folder, "tests")):
            os.symlink(os.path.join(source_dir, "tests"), os.path.join(doc.folder, "tests"))
        if kind == "python":
            run_python_block(doc, where, body, marker, marker_text)
            continue
        commands = console_commands(body) if kind == "console" else bash_commands(body)
        if heading in ("## Quick start", "## 快速上手") and kind == "bash":
            quick_start_commands += len(commands)
        for command, expected in commands:
            run_command(doc, where, command, expected)
    if name.startswith("README") and quick_start_commands < 7:
        fail(f"{name}: only {quick_start_commands} commands found in its quick start (the shipped model, the lab, "
             "a .pth, Python and an OpenAI client make at least 7)")
    if doc is not None:
        for doc_name, doc_port in [key for key in servers if key[0] == name]:
            stop_server(doc, doc_port)


started = time.time()
try:
    # The program as a user has it: `cmake --install` into a prefix of its own (bin/, share/minigen, the module).
    subprocess.run([cmake, "--install", build_dir, "--prefix", prefix], check=True, stdout=subprocess.DEVNULL)
    modules = glob.glob(f"{prefix}/lib/python3*/dist-packages/minigen*.so")
    python_dir = os.path.dirname(modules[0]) if modules else None
    os.makedirs(f"{scratch}/bin")
    os.symlink("/usr/bin/python3", f"{scratch}/bin/python3")  # Debian's, as the docs say (not a pyenv one)
    learner = f"{scratch}/learner"
    subprocess.run([fixture, source_dir, learner], check=True)
    # What else a learner has: questions, a .jsonl of text (MiniMind's dataset/), a LoRA adapter of the SFT model.
    open(f"{learner}/my-questions.txt", "w", encoding="utf-8").write("你好\n《静夜思》的作者是谁？\n什么是 KV 缓存？\n")
    jsonl = ('{"text": "床前明月光，疑是地上霜。举头望明月，低头思故乡。"}\n'
             '{"text": "白日依山尽，黄河入海流。欲穷千里目，更上一层楼。"}\n')
    open(f"{learner}/my-text.jsonl", "w", encoding="utf-8").write(jsonl)
    os.makedirs(f"{learner}/dataset")
    open(f"{learner}/dataset/pretrain_eval.jsonl", "w", encoding="utf-8").write(jsonl)
    os.makedirs(f"{learner}/out/lora")
    shutil.copy(f"{source_dir}/tests/data/lora/tiny_r4.pth", f"{learner}/out/lora/lora_identity_768.pth")
    docs = ["README.md", "README.zh-CN.md"] + sorted(
        os.path.relpath(p, source_dir) for p in glob.glob(f"{source_dir}/docs/*.md"))
    for name in docs:
        run_doc(name)
finally:
    for process, *_ in servers.values():
        process.kill()
    shutil.rmtree(scratch, ignore_errors=True)

print(f"\n{len(skipped)} skipped:")
for where, command, reason in skipped:
    print(f"  {where}: {command[:90]}  — {reason}")
print(f"{counts['blocks run']} blocks run ({counts['commands run']} commands, {counts['outputs checked']} outputs "
      f"checked against the doc), {len(skipped)} skipped, in {time.time() - started:.0f} s")
if failures:
    print(f"{len(failures)} doc command(s) failed:\n  " + "\n  ".join(f.split("\n")[0] for f in failures))
    sys.exit(1)
print("every doc command ran")
