"""Imports MiniMind's OWN code from a MiniMind checkout, for the scripts in tools/rollout/.

make_rollout_fixtures.py, time_torch_rollout.py and drive_minigen_as_minimind.py run MiniMind's
model/model_minimind.py and trainer/rollout_engine.py unmodified; none of MiniMind's code is copied into this
repository. This module holds what they share to do that:

  use_transformers_stub()   puts tools/reference/transformers_stub first on sys.path (Debian 12 has no transformers;
                            the stub provides what MiniMind's files import; see its README), optionally with
                            tools/reference after it (safetensors_io)
  load_module(name, path)   one source file imported as a module with importlib
  import_minimind(checkout) both files of a checkout as modules (the process exits with an error if either is
                            missing); rollout_engine.py's `import requests` (the HTTP client of its
                            SGLangRolloutEngine) gets a placeholder module if requests is not installed, only while
                            the file is imported
  git_commit(checkout)      `git rev-parse HEAD` in the checkout, None if it is not a git checkout

Import it from a script in this directory (the script's directory is on sys.path): `import minimind_checkout`.
"""
import importlib.util
import pathlib
import subprocess
import sys
import types

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
REFERENCE = REPO / "tools" / "reference"
TRANSFORMERS_STUB = REFERENCE / "transformers_stub"
MODEL_FILE = pathlib.Path("model") / "model_minimind.py"
ENGINE_FILE = pathlib.Path("trainer") / "rollout_engine.py"


def use_transformers_stub(with_reference=False):
    """sys.path: tools/reference/transformers_stub first, then (with_reference) tools/reference, then the rest."""
    if with_reference:
        sys.path.insert(0, str(REFERENCE))
    sys.path.insert(0, str(TRANSFORMERS_STUB))


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def import_minimind(checkout):
    """(model_minimind module, rollout_engine module, whether a placeholder stood in for requests) of a checkout.
    The modules are named minimind_model_minimind and minimind_rollout_engine."""
    checkout = pathlib.Path(checkout).resolve()
    model_file = checkout / MODEL_FILE
    engine_file = checkout / ENGINE_FILE
    for path in (model_file, engine_file):
        if not path.is_file():
            sys.exit(f"error: {path} not found (--minimind must be a MiniMind checkout with model/ and trainer/)")
    model_code = load_module("minimind_model_minimind", model_file)
    placeholder = None
    if importlib.util.find_spec("requests") is None:
        # Only SGLangRolloutEngine uses requests; an empty module lets the file import. (Debian: python3-requests.)
        placeholder = types.ModuleType("requests")
        placeholder.__doc__ = "placeholder for requests (not installed): MiniMind's HTTP client cannot be used"
        sys.modules["requests"] = placeholder
    try:
        engine_code = load_module("minimind_rollout_engine", engine_file)
    finally:
        if placeholder is not None:
            del sys.modules["requests"]
    return model_code, engine_code, placeholder is not None


def git_commit(checkout):
    try:
        return subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], check=True, capture_output=True,
                              text=True).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return None
