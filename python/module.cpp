// SPDX-License-Identifier: Apache-2.0
// The Python module `fp8lab`: the bit-exact emulator, its recipes and the CPU trainer for NumPy.
#include "python/bindings.hpp"

PYBIND11_MODULE(fp8lab, m) {
    m.doc() = "fp8lab: bit-exact FP8/FP6/FP4/E8M0 conversion, scaling recipes and the CPU trainer, for NumPy";
    m.attr("__version__") = FP8LAB_VERSION;
    fp8lab::python::add_formats(m);
    fp8lab::python::add_recipes(m);
    fp8lab::python::add_training(m);
    fp8lab::python::add_labs(m);
}
