"""Build the Cython extensions of dptoolkit.

Every ``dptoolkit/**/*.pyx`` is compiled, so a new kernel needs no edit here.
Compiler directives are set once, below.  Environment variables:

``DPTOOLKIT_CYTHON_DEBUG=1``
    debug build: ``boundscheck``/``wraparound``/``initializedcheck`` on, no -O3.
``DPTOOLKIT_EXTENSIONS=dptoolkit.linear_model._frank_wolfe._heap,dptoolkit.dsal._prox_fast``
    build only these modules, named by their dotted path in the package
    (developer convenience for in-place rebuilds).
``DPTOOLKIT_BUILD_JOBS=N``
    parallel jobs for cythonize and the C compiler (default: the CPU count).
``DPTOOLKIT_NO_OPENMP=1``
    build without OpenMP even if the compiler supports it.

The kernels listed in ``OPENMP_MODULES`` are compiled and linked with OpenMP
when the compiler passes a compile-and-link test (as scikit-learn's build does),
else serially: their ``prange`` loops then run on one thread, with the same
results.
"""
import os
import tempfile
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("DPTOOLKIT_CYTHON_DEBUG", "0") not in ("", "0")
JOBS = int(os.environ.get("DPTOOLKIT_BUILD_JOBS", os.cpu_count() or 1))
NO_OPENMP = os.environ.get("DPTOOLKIT_NO_OPENMP", "0") not in ("", "0")
ONLY = {m.strip() for m in os.environ.get("DPTOOLKIT_EXTENSIONS", "").split(",") if m.strip()}

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "nonecheck": False,
    "embedsignature": True,
}
compile_args = ["-O0", "-g"] if DEBUG else ["-O3"]
# numpy's C API version pin keeps the extensions loadable on numpy >= 2.0
macros = [("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")]
# Link libm explicitly: an extension that leaves exp/log unresolved at link time
# gets them bound at load time to their oldest symbol versions, which on glibc
# are compatibility wrappers (exp@GLIBC_2.2.5 checks for SVID error handling
# around the same __exp); linked, they bind to the current versions.  Same
# results, fewer instructions per call in the kernels' hot loops.
libraries = ["m"] if os.name == "posix" else []

# Kernels built with OpenMP (when the compiler supports it): those with prange loops.
OPENMP_MODULES = {
    "dptoolkit.dsal._prox_fast",
    "dptoolkit.linear_model._frank_wolfe._fw_fast",
}

extensions = []
for pyx in sorted(Path("dptoolkit").rglob("*.pyx")):
    name = ".".join(pyx.with_suffix("").parts)
    if ONLY and name not in ONLY:
        continue
    ext = Extension(
        name,
        [str(pyx)],
        include_dirs=[np.get_include()],
        define_macros=macros,
        libraries=libraries,
        extra_compile_args=list(compile_args),
    )
    extensions.append(ext)

OPENMP_TEST = r"""
#include <omp.h>
int main(void) {
    int n = 0;
    #pragma omp parallel reduction(+:n)
    n += 1;
    return n > 0 && n <= omp_get_max_threads() ? 0 : 1;
}
"""


def openmp_flags(compiler):
    """(compile, link) flags that build and link an OpenMP program with this
    compiler, or None when it does not support OpenMP."""
    if compiler.compiler_type == "msvc":
        flags = (["/openmp"], [])
    else:
        flags = (["-fopenmp"], ["-fopenmp"])
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "test_openmp.c")
        with open(src, "w") as f:
            f.write(OPENMP_TEST)
        try:
            objects = compiler.compile([src], output_dir=tmp, extra_postargs=flags[0])
            compiler.link_executable(objects, "test_openmp", output_dir=tmp,
                                     extra_postargs=flags[1])
        except Exception:  # CompileError, LinkError: build serially
            return None
    return flags



class ParallelBuildExt(build_ext):
    """build_ext compiling the extensions in parallel (also under pip)."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None and JOBS > 1:
            self.parallel = JOBS

    def build_extensions(self):
        flags = None
        if not NO_OPENMP and any(e.name in OPENMP_MODULES for e in self.extensions):
            flags = openmp_flags(self.compiler)
            if flags is None:
                print("dptoolkit: the compiler does not support OpenMP; "
                      "the parallel kernels are built to run on one thread")
        if flags is not None:
            for ext in self.extensions:
                if ext.name in OPENMP_MODULES:
                    ext.extra_compile_args = ext.extra_compile_args + flags[0]
                    ext.extra_link_args = ext.extra_link_args + flags[1]
        super().build_extensions()

    def copy_file(self, infile, outfile, *args, **kwargs):
        # In-place builds: replace a compiled module by a new file instead of
        # overwriting it, so processes that have the old one loaded keep their
        # mapping (writing into a loaded .so crashes them).
        if str(outfile).endswith((".so", ".pyd")) and os.path.exists(outfile):
            os.unlink(outfile)
        return super().copy_file(infile, outfile, *args, **kwargs)


setup(
    cmdclass={"build_ext": ParallelBuildExt},
    ext_modules=cythonize(
        extensions,
        compiler_directives=directives,
        # a debug build must not reuse C files generated by an optimised build
        force=DEBUG,
        quiet=True,
        nthreads=JOBS if JOBS > 1 else 0,
    ),
)
