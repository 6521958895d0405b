"""Process setup shared by the training scripts: OpenBLAS, threads, and the BLAS self-check.

Call `prepare()` first thing in a script, before torch is imported. This machine's default libblas.so.3 is Debian's
reference BLAS (≈3.5 GFLOP/s for our matmuls); OpenBLAS (Debian package libopenblas0-openmp) runs them at ≈25. To use
OpenBLAS without changing the system's BLAS alternative, `prepare()` re-executes the script once with the OpenBLAS
directory first on LD_LIBRARY_PATH (torch links libblas.so.3 by that name). OpenBLAS 0.3.21 misdetects this CPU, so
OPENBLAS_CORETYPE is set to SkylakeX when the CPU has AVX-512 (else Haswell: SkylakeX's kernels stop with an illegal
instruction on an AVX2-only CPU) unless MINIGEN_OPENBLAS_CORETYPE names another.
OpenMP threads wait passively (OMP_WAIT_POLICY=PASSIVE) and glibc malloc keeps large blocks (MALLOC_*_ variables)
unless the environment says otherwise.
"""
import os
import pathlib
import sys

OPENBLAS_DIRECTORIES = ("/usr/lib/x86_64-linux-gnu/openblas-openmp", "/usr/lib/x86_64-linux-gnu/openblas-pthread")
_REEXEC_MARK = "MINIGEN_TRAIN_RUNTIME"


def _default_coretype():
    try:
        flags = next(line for line in open("/proc/cpuinfo", encoding="utf-8") if line.startswith("flags"))
    except (OSError, StopIteration):
        return "Haswell"
    return "SkylakeX" if " avx512f" in flags else "Haswell"


def prepare(threads=2):
    """Sets the BLAS environment (re-executing the process once if needed). Returns nothing; torch is not imported."""
    if os.environ.get(_REEXEC_MARK) == "1":
        return
    environment = dict(os.environ)
    environment[_REEXEC_MARK] = "1"
    environment["OPENBLAS_CORETYPE"] = os.environ.get("MINIGEN_OPENBLAS_CORETYPE", _default_coretype())
    environment["OMP_NUM_THREADS"] = str(threads)
    # Other jobs share the two cores; spinning OpenMP workers then wait on each other (2 threads measured 3× slower
    # than 1 under a load of 6). Passive waiting keeps 2 threads at least as fast as 1.
    environment.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    # glibc returns every freed block above its mmap threshold to the kernel, so each step re-faults the pages of
    # its large activations (180,000 page faults and a third of the time per step, measured). Keep blocks up to the
    # largest threshold glibc allows (32 MiB) on the heap, and do not trim it; the trainer's micro-batches keep
    # their tensors under that size.
    environment.setdefault("MALLOC_MMAP_THRESHOLD_", str(32 << 20))
    environment.setdefault("MALLOC_TRIM_THRESHOLD_", str(4 << 30))
    environment.setdefault("MALLOC_TOP_PAD_", str(256 << 20))
    environment["OPENBLAS_NUM_THREADS"] = str(threads)
    for directory in OPENBLAS_DIRECTORIES:
        if (pathlib.Path(directory) / "libblas.so.3").exists():
            environment["LD_LIBRARY_PATH"] = directory + (":" + os.environ["LD_LIBRARY_PATH"]
                                                          if os.environ.get("LD_LIBRARY_PATH") else "")
            break
    os.execve(sys.executable, [sys.executable] + sys.argv, environment)


def loaded_blas():
    """The BLAS library file this process has mapped (from /proc/self/maps)."""
    with open("/proc/self/maps") as maps:
        paths = [line.split()[-1] for line in maps if len(line.split()) >= 6]
    for wanted in ("libopenblas", "libblas"):
        for path in paths:
            if wanted in pathlib.Path(path).name:
                return path
    return "(none)"


def check_blas(torch, threads=2, quiet=False):
    """Sets torch's threads, checks one float32 matmul against a naive float64 sum of products, and says which BLAS
    and core type run. Raises if the matmul is wrong (a misdetected OpenBLAS kernel computes garbage or crashes)."""
    torch.set_num_threads(threads)
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(64, 256, generator=generator)
    b = torch.randn(256, 96, generator=generator)
    naive = (a.double()[:, :, None] * b.double()[None, :, :]).sum(1)
    error = ((a @ b).double() - naive).abs().max().item()
    blas = loaded_blas()
    if not quiet:
        print(f"BLAS: {blas}, OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}, "
              f"torch threads {torch.get_num_threads()}; matmul vs naive: max |error| {error:.2e}", file=sys.stderr)
    if not error < 1e-3:  # sums of 256 products of N(0, 1) values: float32 rounding gives ~1e-5
        raise SystemExit(f"BLAS self-check failed: matmul differs from the naive product by {error}")
    if "openblas" not in blas and not quiet:
        print("warning: OpenBLAS is not loaded; training will be ~7× slower "
              "(apt-get install libopenblas0-openmp)", file=sys.stderr)
