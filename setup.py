"""pip install --no-build-isolation .  : the gtsim Python package (docs/python.md).

The extension gtsim_core (the package's compiled half, a top-level module) is built by the project's CMake build (python/CMakeLists.txt) for the
interpreter pip runs under; the pure-Python part is python/gtsim. The CMake build goes to build-pip/
(GTSIM_CMAKE_BUILD_DIR reuses another configured build folder, e.g. build-py). The data the module reads
(hw_configs, kernels_ir/lib) is found through GTSIM_DATA or the source tree it was built from."""
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(HERE, "build-pip"), exist_ok=True)  # setuptools' build and egg-info folder


def project_version():
    with open(os.path.join(HERE, "CMakeLists.txt")) as f:
        m = re.search(r"project\(gtsim VERSION ([0-9.]+)", f.read())
    return m.group(1) if m else "0.0.0"


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.environ.get("GTSIM_CMAKE_BUILD_DIR") or os.path.join(HERE, "build-pip", "cmake")
        build_dir = os.path.abspath(build_dir)
        jobs = os.environ.get("GTSIM_BUILD_JOBS", str(os.cpu_count() or 1))
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            subprocess.check_call(["cmake", "-S", HERE, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                                   "-DGTSIM_BUILD_TESTS=OFF", "-DGTSIM_BUILD_BENCH=OFF", "-DGTSIM_BUILD_CUDA=OFF",
                                   f"-DPython3_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", build_dir, "-j", jobs, "--target", "gtsim_python"])
        pkg = os.path.join(build_dir, "python")
        built = [f for f in os.listdir(pkg) if f.startswith("gtsim_core") and f.endswith(".so")] if os.path.isdir(pkg) else []
        if not built:
            sys.exit(f"gtsim: the CMake build made no python/gtsim_core*.so in {build_dir} "
                     "(is pybind11-dev installed? see the CMake output)")
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(os.path.join(pkg, built[0]), dest)


setup(
    name="gtsim",
    version=project_version(),
    description="gtsim: a cycle-approximate GPU/TPU architecture simulator, from Python",
    packages=["gtsim"],
    package_dir={"gtsim": "python/gtsim"},
    ext_modules=[Extension("gtsim_core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build-pip"}, "egg_info": {"egg_base": "build-pip"}},
    python_requires=">=3.9",
    zip_safe=False,
)
