"""pip install --no-build-isolation --no-index . installs the module with Debian's setuptools (no package
index): into a temporary folder with --target, reusing this build's CMake folder (GTSIM_CMAKE_BUILD_DIR,
so nothing is rebuilt from scratch), then imported from another folder, where it runs one small
simulation. Exit 77 (skipped) without pip or setuptools for the interpreter."""
import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ.get("GTSIM_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BUILD = os.environ.get("GTSIM_CMAKE_BUILD_DIR", "")


def skip(why):
    print(f"skipped: {why}")
    sys.exit(77)


for module in ("pip", "setuptools"):
    if subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode != 0:
        skip(f"no {module} for {sys.executable} (Debian: python3-pip python3-setuptools)")
if not BUILD or not os.path.exists(os.path.join(BUILD, "CMakeCache.txt")):
    skip("GTSIM_CMAKE_BUILD_DIR does not name a configured build folder (ctest sets it)")

target = tempfile.mkdtemp(prefix="gtsim_pip_")
elsewhere = tempfile.mkdtemp(prefix="gtsim_pip_cwd_")
try:
    env = dict(os.environ, GTSIM_CMAKE_BUILD_DIR=BUILD, GTSIM_BUILD_JOBS=os.environ.get("GTSIM_BUILD_JOBS", "2"),
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)  # the installed copy, not the build's
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps",
                        "--target", target, "."], cwd=SRC, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"pip install failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    env["PYTHONPATH"] = target
    code = ("import json, gtsim, os\n"
            "assert os.path.dirname(gtsim.__file__).startswith(os.environ['PYTHONPATH']), gtsim.__file__\n"
            "r = gtsim.run('hw_configs/a100-40gb.yaml', 'kernels_ir/lib/gemm_tiled.kir',"
            " params={'M': 256, 'N': 256, 'K': 256})\n"
            "assert r['cycles'] > 0 and r['time_us'] > 0, r\n"
            "print(json.dumps({'version': gtsim.__version__, 'cycles': r['cycles']}))\n")
    q = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, env=env, capture_output=True, text=True)
    if q.returncode != 0:
        sys.exit(f"the installed module failed from {elsewhere} ({q.returncode}):\n{q.stdout}\n{q.stderr}")
    print("ok   installed with pip --no-build-isolation --no-index, imported elsewhere, ran:", q.stdout.strip())
finally:
    shutil.rmtree(target, ignore_errors=True)
    shutil.rmtree(elsewhere, ignore_errors=True)
print("all checks passed")
