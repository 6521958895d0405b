"""Shared fixtures: the shipped models, loaded once, and the programs the module is compared with.

ctest runs pytest from the source tree with PYTHONPATH=build/python and the programs' paths in the environment;
by hand: PYTHONPATH=build/python /usr/bin/python3 -m pytest -q python/tests (from the repository root).
"""
import json
import os
import pathlib
import subprocess

import pytest

import minigen

ROOT = pathlib.Path(__file__).resolve().parents[2]
SFT = str(ROOT / "models" / "minigen-tiny-sft")
BASE = str(ROOT / "models" / "minigen-tiny-base")
BUILD = pathlib.Path(os.environ.get("PYTHONPATH", str(ROOT / "build" / "python")).split(os.pathsep)[0]).parent


@pytest.fixture(scope="session")
def sft():
    return minigen.Model(SFT, weights="f32", threads=2)


@pytest.fixture(scope="session")
def base():
    return minigen.Model(BASE, weights="f32", threads=2)


def minigen_binary():
    return os.environ.get("MINIGEN_BINARY", str(BUILD / "minigen"))


def step_logits_binary():
    return os.environ.get("MINIGEN_STEP_LOGITS", str(BUILD / "python" / "minigen_step_logits"))


def cli_generate_json(*flags):
    """`minigen generate --json FLAGS…` as a dict."""
    done = subprocess.run([minigen_binary(), "generate", "--json", *flags], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def cli_error(*args):
    """The message `minigen ARGS…` prints after "minigen: error: " (it must fail)."""
    done = subprocess.run([minigen_binary(), *args], capture_output=True, text=True)
    assert done.returncode != 0
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("minigen: error: "), line
    return line[len("minigen: error: "):]
