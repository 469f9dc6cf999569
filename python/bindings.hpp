// SPDX-License-Identifier: Apache-2.0
// What the Python module's binding files share: argument parsing with errors that name
// the argument, and NumPy arrays in C order.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "emulator/formats/format.hpp"
#include "emulator/formats/rounding.hpp"

namespace fp8lab::python {

namespace py = pybind11;

// A format from fp8lab's name ("e4m3") or ml_dtypes' ("float8_e4m3fn"); a Format object
// passes through. ValueError naming `argument` otherwise.
const emu::Format& format_argument(const py::object& fmt, const char* argument);

// ml_dtypes' name of a format, or "" where ml_dtypes has none.
std::string ml_dtypes_name(const emu::Format& f);

// Rounding, saturation ("finite"/"none" or True/False), seed and random bits as options.
emu::ConvertOptions convert_options(const std::string& rounding, const py::object& saturate, std::uint64_t seed,
                                    int random_bits);

// x as a C-ordered float32 or float64 array (a copy only when x is not C-ordered);
// ValueError naming `argument` for other dtypes, MemoryError when the copy cannot be made.
py::array float_array(const py::object& x, const char* argument);
// Whether `a` holds T: dtypes compared by equality, not identity (a pickled, ctypes-backed
// or metadata-carrying float32 array has a dtype object of its own that equals float32's).
template <class T>
bool holds(const py::array& a) {
    return a.dtype().equal(py::dtype::of<T>());
}
// x (which holds T) as a C-ordered array (a copy only when x is not one). The copy is NumPy's
// astype, whose MemoryError reaches the caller: pybind11's ensure() clears it and returns a
// null array instead, which must not be used.
template <class T>
py::array_t<T, py::array::c_style> c_order(const py::array& x) {
    using namespace pybind11::literals;
    const py::array ordered =
        (x.flags() & py::array::c_style) ? x : py::array(x.attr("astype")(py::dtype::of<T>(), "order"_a = "C"));
    auto a = py::array_t<T, py::array::c_style>::ensure(ordered);  // no copy: already C-ordered T
    if (!a) throw py::type_error("internal: a C-ordered array was not one");
    return a;
}
// numpy.asarray(x): NumPy scalars, 0-d arrays, lists and Python numbers as arrays.
py::array as_array(const py::object& x);

void add_formats(py::module_& m);
void add_recipes(py::module_& m);
void add_training(py::module_& m);
void add_labs(py::module_& m);

}  // namespace fp8lab::python
