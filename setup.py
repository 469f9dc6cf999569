# SPDX-License-Identifier: Apache-2.0
"""`pip install .`: builds the extension module `fp8lab` with CMake for the running Python.

pyproject.toml holds the package's metadata; this file only says how the one extension is
built: CMake (from PATH, or from the `cmake` build requirement in an isolated build)
configures the source with FP8LAB_PYTHON_PACKAGE=ON (and any arguments in the CMAKE_ARGS
environment variable), which builds the emulator, the labs and the module alone, and the
module is copied where setuptools packs it, with the lab texts and recorded measurements
that run_step reads in fp8lab_data/ beside it.
"""
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = Path(self.build_temp).resolve() / "cmake"
        build.mkdir(parents=True, exist_ok=True)
        configure = [
            "cmake", "-S", str(SOURCE), "-B", str(build),
            "-DCMAKE_BUILD_TYPE=Release",
            "-DFP8LAB_PYTHON_PACKAGE=ON",
            f"-DPython_EXECUTABLE={sys.executable}",
        ]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        # Extra CMake arguments from the environment, after the defaults so that they win
        # (the convention of scikit-build and conda): CMAKE_ARGS="-DCMAKE_BUILD_TYPE=Debug".
        configure += shlex.split(os.environ.get("CMAKE_ARGS", ""))
        try:  # pybind11 from the Python package where there is one (an isolated build)
            import pybind11
            configure.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
        except ImportError:
            pass  # Debian's pybind11-dev, found by CMake in its usual place
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "fp8lab_python", "--parallel", jobs], check=True)
        built = sorted((build / "python").glob("fp8lab*" + (".pyd" if os.name == "nt" else ".so")))
        if len(built) != 1:
            raise RuntimeError(f"expected one built module in {build / 'python'}, found {built}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)
        # The lab texts and recorded measurements that run_step reads, beside the module
        # (python/labs.cpp looks for fp8lab_data/ there).
        data = target.parent / "fp8lab_data"
        shutil.rmtree(data, ignore_errors=True)
        for folder, pattern in ((SOURCE / "labs" / "content", "*.md"), (SOURCE / "assets", "*.csv")):
            destination = data / ("content" if folder.name == "content" else "assets")
            destination.mkdir(parents=True)
            for f in sorted(folder.glob(pattern)):
                shutil.copyfile(f, destination / f.name)


setup(
    ext_modules=[CMakeExtension("fp8lab")],
    cmdclass={"build_ext": CMakeBuild},
    # Beside the CMake trees (build/, build-*/), not in them.
    options={"build": {"build_base": "build-pip"}},
)
