"""gtsim from Python: the simulator's command line, in process.

Every function runs the same code as the ``gtsim`` executable (the subcommand of the same name, with
``--json`` to a temporary file) and returns what that JSON holds as plain Python objects, so the numbers
are the CLI's. Bad input raises :class:`InputError` whose message starts with ``file:line:col``. The GIL
is released while C++ runs; calls into gtsim are serialized (run several points at once with
``sweep(..., threads=N)``). See docs/python.md.

    >>> import gtsim
    >>> r = gtsim.run(hw="hw_configs/a100-40gb.yaml", kernel="kernels_ir/lib/gemm_tiled.kir",
    ...               params={"M": 512, "N": 512, "K": 512})
    >>> r["cycles"], r["time_us"]
"""

import csv
import io
import json
import os

import gtsim_core as _core  # the compiled half (python/module.cpp), beside this package

__all__ = [
    "GtsimError", "InputError", "UsageError", "LimitError", "SimulationError",
    "load_config", "load_kernel", "run", "sweep", "workload", "compare", "waves", "gemm", "roofline",
    "cli", "data_dir", "data_path", "__version__",
]
__version__ = _core.version


class GtsimError(Exception):
    """Any error gtsim reports (the CLI's exit code 2)."""


class InputError(GtsimError, ValueError):
    """Bad input: a config, kernel, workload or option value. The message is the CLI's diagnostics,
    each ``file:line:col: message``; ``diagnostics`` holds them one per item."""

    def __init__(self, message):
        super().__init__(message)
        self.diagnostics = [line for line in message.splitlines() if line.strip()]


class UsageError(GtsimError, ValueError):
    """An option the subcommand does not take, or a missing required one (the CLI's usage error)."""


class SimulationError(GtsimError, RuntimeError):
    """A simulation that could not complete (deadlock, watchdog)."""


class LimitError(SimulationError):
    """A run that crossed one of the limits (--max-cycles and friends); the message names the flag."""


_ERRORS = {"input": InputError, "usage": UsageError, "simulation": SimulationError, "limit": LimitError}


def _raise(kind, message):
    raise _ERRORS.get(kind, GtsimError)(message.strip() or "gtsim failed")


def _unwrap(outcome):
    kind, message, text = outcome
    if kind:
        _raise(kind, message)
    return json.loads(text)


def data_dir():
    """gtsim's data folder: the one holding kernels_ir/lib and hw_configs (source tree or installed)."""
    return _unwrap(_core.data_dir())


def data_path(rel):
    """``rel`` under :func:`data_dir`, e.g. ``data_path("hw_configs/a100-40gb.yaml")``."""
    return os.path.join(data_dir(), os.fspath(rel))


def _path(p):
    """A path as given when it exists (or is absolute); else the same path under gtsim's data folder
    when that exists, so ``hw_configs/...`` and ``kernels_ir/...`` work from any folder."""
    p = os.fspath(p)
    if os.path.isabs(p) or os.path.exists(p):
        return p
    try:
        alt = data_path(p)
    except GtsimError:
        return p
    return alt if os.path.exists(alt) else p


def _pairs(values, what):
    """{"M": 1024} or ["M=1024"] or "M=1024" -> ["M=1024"]."""
    if values is None:
        return []
    if isinstance(values, str):
        return [values]
    if isinstance(values, dict):
        out = []
        for k, v in values.items():
            if isinstance(v, bool):
                v = str(v).lower()
            out.append(f"{k}={v}")
        return out
    try:
        return [str(v) for v in values]
    except TypeError:
        raise TypeError(f"{what}: a dict, a list of 'NAME=VALUE' strings or one such string") from None


def _sweep_value(v):
    """A sweep parameter's values: 512, "64:4096:64", (start, stop[, step]) or range(...) -> CLI text."""
    if isinstance(v, range):
        if len(v) == 0:
            raise ValueError("sweep: an empty range")
        return f"{v.start}:{v[-1]}:{v.step}"
    if isinstance(v, tuple):
        return ":".join(str(x) for x in v)
    if isinstance(v, list):
        if len(v) == 1:
            return str(v[0])
        step = v[1] - v[0]
        if step > 0 and all(b - a == step for a, b in zip(v, v[1:])):
            return f"{v[0]}:{v[-1]}:{step}"
        raise ValueError("sweep: a list of values must be evenly spaced (the CLI takes START:STOP:STEP)")
    return str(v)


def _options(options):
    """Further keyword arguments -> CLI options: foo_bar=3 -> --foo-bar 3, flag=True -> --flag,
    False/None -> left out, a list -> the option repeated."""
    argv = []
    for key, value in options.items():
        opt = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            argv.append(opt)
        elif isinstance(value, (list, tuple)):
            for v in value:
                argv += [opt, str(os.fspath(v) if hasattr(v, "__fspath__") else v)]
        else:
            argv += [opt, str(os.fspath(value) if hasattr(value, "__fspath__") else value)]
    return argv


def _command(argv):
    rc, kind, error, out, stdout = _core.run_command([str(a) for a in argv])
    if rc != 0:
        _raise(kind or "error", error or stdout)
    return out, stdout


def _json_command(argv):
    out, _ = _command(argv)
    return json.loads(out)


def cli(*args):
    """Runs any gtsim subcommand in process, e.g. ``cli("check", "hw_configs/a100-40gb.yaml")``. Returns
    the parsed --json output where the subcommand has one (the CSV rows for sweep and merge), else its
    text report."""
    argv = [os.fspath(a) if hasattr(a, "__fspath__") else str(a) for a in args]
    out, stdout = _command(argv)
    if argv and argv[0] in ("sweep", "merge"):
        return _csv_rows(out)
    return json.loads(out) if out else stdout


def load_config(hw, sets=None):
    """The machine config ``hw`` (hw_configs/*.yaml) with ``sets`` overrides ({"sm.count": 54} or
    ["sm.count=54"]), resolved (inherited files merged) as a dict: what ``gtsim run --resolved-config``
    writes."""
    return _unwrap(_core.load_config(_path(hw), _pairs(sets, "sets")))


def load_kernel(kernel, params=None, hw=None, sets=None):
    """A kernel file's name, parameters (with their default expressions), grid/block expressions and
    buffers. When every parameter has a value (``params`` or its default), ``launch`` holds the bound
    launch: parameter values, grid, block, CTAs, shared memory, registers and buffer sizes (checked
    against the machine's limits when ``hw`` is given)."""
    params = {str(k): int(v) for k, v in (params or {}).items()}
    return _unwrap(_core.load_kernel(_path(kernel), params, _path(hw) if hw else "", _pairs(sets, "sets")))


def run(hw, kernel, params=None, sets=None, exact=False, stats=False, l2_start=None, **options):
    """``gtsim run``: one kernel on one machine. Returns the result dict (cycles, time_us, waves, dram
    bytes, ...; ``stats=True`` adds the stats tree). Other options as keywords, e.g. max_cycles=10**9."""
    argv = ["run", "--hw", _path(hw), "--kernel", _path(kernel)]
    argv += [a for p in _pairs(params, "params") for a in ("--param", p)]
    argv += [a for s in _pairs(sets, "sets") for a in ("--set", s)]
    argv += _options(dict(exact=exact, stats=stats, l2_start=l2_start, **options))
    return _json_command(argv)


def workload(hw, workload, params=None, sets=None, exact=False, **options):
    """``gtsim workload``: a workload's kernels in order on one machine (time and share per kernel,
    bytes, FLOPs, bound). Flags as keywords: no_fusion=True, cuda_graph=True, no_carry_l2=True, tile="128x128"."""
    argv = ["workload", "--hw", _path(hw), "--workload", _path(workload)]
    argv += [a for p in _pairs(params, "params") for a in ("--param", p)]
    argv += [a for s in _pairs(sets, "sets") for a in ("--set", s)]
    argv += _options(dict(exact=exact, **options))
    return _json_command(argv)


def compare(workload, hw, params=None, sets=None, exact=False, **options):
    """``gtsim compare``: one workload on several machines (``hw``: a list of configs) side by side.
    ``sets`` apply to every machine (a key one of them lacks raises, naming it); a TPU matmul tiling is
    tiling="BMxBKxBN"."""
    hws = [hw] if isinstance(hw, (str, os.PathLike)) else list(hw)
    argv = ["compare", "--workload", _path(workload)]
    argv += [a for h in hws for a in ("--hw", _path(h))]
    argv += [a for p in _pairs(params, "params") for a in ("--param", p)]
    argv += [a for s in _pairs(sets, "sets") for a in ("--set", s)]
    argv += _options(dict(exact=exact, **options))
    return _json_command(argv)


def waves(hw, gemm, sets=None, exact=False, suggestions=True, **options):
    """``gtsim waves``: tiles, waves, tile efficiency and alignment of a GEMM shape (``gemm``: "MxNxK"
    or (M, N, K)), with padded alternatives unless suggestions=False."""
    if not isinstance(gemm, str):
        gemm = "x".join(str(int(d)) for d in gemm)
    argv = ["waves", "--hw", _path(hw), "--gemm", gemm]
    argv += [a for s in _pairs(sets, "sets") for a in ("--set", s)]
    argv += _options(dict(exact=exact, no_suggestions=not suggestions, **options))
    return _json_command(argv)


def gemm(hw, shape, dtype="bf16", sets=None, exact=False, autotune=False, **options):
    """``gtsim gemm``: the GEMM kernel a library's heuristic would pick for ``shape`` ((M, N, K) or
    "MxNxK"), why, and its simulated time (docs/workloads.md)."""
    dims = shape.split("x") if isinstance(shape, str) else [str(int(d)) for d in shape]
    argv = ["gemm", "--hw", _path(hw), *dims, "--dtype", dtype]
    argv += [a for s in _pairs(sets, "sets") for a in ("--set", s)]
    argv += _options(dict(exact=exact, autotune=autotune, **options))
    return _json_command(argv)


def roofline(hw, workload=None, params=None, sets=None, exact=False, **options):
    """``gtsim roofline``: attained ridge points, and each kernel of ``workload`` under the roof."""
    argv = ["roofline", "--hw", _path(hw)]
    if workload:
        argv += ["--workload", _path(workload)]
    argv += [a for p in _pairs(params, "params") for a in ("--param", p)]
    argv += [a for s in _pairs(sets, "sets") for a in ("--set", s)]
    argv += _options(dict(exact=exact, **options))
    return _json_command(argv)


def _number(text):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def _csv_rows(text):
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    return [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(io.StringIO("\n".join(lines)))]


def sweep(hw, kernel=None, workload=None, params=None, sets=None, threads=None, exact=False, l2_start=None,
          as_frame=None, **options):
    """``gtsim sweep``: one kernel (or workload) over a grid of parameters; a row per point, the CSV's
    columns. ``params``: {"M,N,K": range(256, 2049, 256)} or {"n": "1024:65536:1024", "tile": 64}
    (ranges, (start, stop[, step]) tuples with stop included, evenly spaced lists or single values); the
    first is outermost. Returns a pandas DataFrame when pandas is importable (as_frame=False: a list of
    dicts either way)."""
    if (kernel is None) == (workload is None):
        raise ValueError("sweep: give kernel= or workload=")
    argv = ["sweep", "--hw", _path(hw)]
    argv += ["--kernel", _path(kernel)] if kernel is not None else ["--workload", _path(workload)]
    if isinstance(params, dict):
        argv += [a for k, v in params.items() for a in ("--param", f"{k}={_sweep_value(v)}")]
    else:
        argv += [a for p in _pairs(params, "params") for a in ("--param", p)]
    argv += [a for s in _pairs(sets, "sets") for a in ("--set", s)]
    argv += _options(dict(threads=threads, exact=exact, l2_start=l2_start, **options))
    out, _ = _command(argv)
    rows = _csv_rows(out)
    if as_frame is False:
        return rows
    try:
        import pandas
    except ImportError:
        if as_frame:
            raise
        return rows
    return pandas.DataFrame(rows)
