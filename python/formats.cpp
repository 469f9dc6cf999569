// SPDX-License-Identifier: Apache-2.0
// Formats, and conversion of NumPy arrays: encode, decode, round_to, as_ml_dtypes.
#include <pybind11/stl.h>

#include <cstring>
#include <vector>

#include "emulator/formats/bulk.hpp"
#include "emulator/formats/convert.hpp"
#include "emulator/base/enum_names.hpp"
#include "emulator/base/parallel.hpp"
#include "emulator/base/quoted_input.hpp"
#include "python/bindings.hpp"

namespace fp8lab::python {
namespace {

struct Alias {
    const char* ml_dtypes;
    const char* ours;
};
// ml_dtypes' (and NumPy's) names of the formats both have.
constexpr Alias kAliases[] = {{"float8_e4m3fn", "e4m3"},
                              {"float8_e5m2", "e5m2"},
                              {"float6_e3m2fn", "e3m2"},
                              {"float6_e2m3fn", "e2m3"},
                              {"float4_e2m1fn", "e2m1"},
                              {"float8_e8m0fnu", "e8m0"},
                              {"float8_e4m3fnuz", "e4m3fnuz"},
                              {"float8_e5m2fnuz", "e5m2fnuz"},
                              {"bfloat16", "bf16"},
                              {"float16", "fp16"},
                              {"float32", "fp32"}};

constexpr std::size_t kChunk = 1 << 16;

std::vector<py::ssize_t> shape_of(const py::array& a) { return {a.shape(), a.shape() + a.ndim()}; }

// The unsigned dtype that holds a format's codes.
py::dtype code_dtype(const emu::Format& f) {
    if (f.total_bits <= 8) return py::dtype::of<std::uint8_t>();
    if (f.total_bits <= 16) return py::dtype::of<std::uint16_t>();
    return py::dtype::of<std::uint32_t>();
}

template <class Code>
void store(py::array& out, std::size_t i, std::uint32_t code) {
    static_cast<Code*>(out.mutable_data())[i] = static_cast<Code>(code);
}

// `out` when given (the codes' dtype, x's shape, C order, writable), else a new array.
py::array output_array(const py::object& out, const py::dtype& dtype, const py::array& x) {
    if (out.is_none()) return py::array(dtype, shape_of(x));
    if (!py::isinstance<py::array>(out)) throw py::value_error("out: must be a NumPy array");
    py::array a = out.cast<py::array>();
    if (!a.dtype().equal(dtype) || shape_of(a) != shape_of(x) || !(a.flags() & py::array::c_style) || !a.writeable())
        throw py::value_error("out: must be a writable, C-ordered " +
                              std::string(py::str(static_cast<const py::handle&>(dtype))) + " array of x's shape");
    return a;
}

py::array encode(const py::object& x_in, const py::object& fmt, const std::string& rounding, const py::object& saturate,
                 std::uint64_t seed, int random_bits, const py::object& out_object) {
    const emu::Format& f = format_argument(fmt, "fmt");
    const emu::ConvertOptions o = convert_options(rounding, saturate, seed, random_bits);
    const py::array x = float_array(x_in, "x");
    py::array out = output_array(out_object, code_dtype(f), x);
    const std::size_t n = std::size_t(x.size());
    const bool is_double = holds<double>(x);
    if (!is_double && f.total_bits <= 8) {
        const std::span<const float> in(static_cast<const float*>(x.data()), n);
        const std::span<std::uint8_t> codes(static_cast<std::uint8_t*>(out.mutable_data()), n);
        py::gil_scoped_release release;
        emu::quantize_span(f, in, 1.0f, codes, o);  // the bulk path: one rounding, scale 1
        return out;
    }
    const void* data = x.data();
    void* dst = out.mutable_data();
    {
        py::gil_scoped_release release;
        emu::parallel_for_chunks(n, kChunk, [&](std::size_t, std::size_t b, std::size_t e) {
            for (std::size_t i = b; i < e; ++i) {
                // A float64 is rounded once, directly to the format (never through float32).
                const std::uint32_t code = is_double ? emu::encode(f, static_cast<const double*>(data)[i], o, i)
                                                     : emu::encode(f, static_cast<const float*>(data)[i], o, i);
                if (f.total_bits <= 8)
                    static_cast<std::uint8_t*>(dst)[i] = std::uint8_t(code);
                else if (f.total_bits <= 16)
                    static_cast<std::uint16_t*>(dst)[i] = std::uint16_t(code);
                else
                    static_cast<std::uint32_t*>(dst)[i] = code;
            }
        });
    }
    return out;
}

py::array decode(const py::object& codes_object, const py::object& fmt) {
    const emu::Format& f = format_argument(fmt, "fmt");
    const py::array codes_in = as_array(codes_object);
    if (codes_in.dtype().kind() != 'u' && codes_in.dtype().kind() != 'i')
        throw py::value_error("codes: must be an array of integer codes, not dtype " +
                              std::string(py::str(codes_in.dtype())));
    if (codes_in.dtype().kind() == 'i') {  // a negative code is named as given, not as its wrapped unsigned value
        const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> signed_codes(codes_in);
        const std::int64_t* s = signed_codes.data();
        for (py::ssize_t i = 0; i < signed_codes.size(); ++i)
            if (s[i] < 0)
                throw py::value_error("codes: " + std::to_string(s[i]) + " at index " + std::to_string(i) +
                                      " is not a code of " + std::string(f.name) + " (0 to " +
                                      std::to_string(f.code_count() - 1) + ")");
    }
    const py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast> codes(codes_in);
    py::array_t<float> out(shape_of(codes));
    const std::uint64_t* c = codes.data();
    float* o = out.mutable_data();
    const std::size_t n = std::size_t(codes.size());
    for (std::size_t i = 0; i < n; ++i)
        if (c[i] >= f.code_count())
            throw py::value_error("codes: " + std::to_string(c[i]) + " at index " + std::to_string(i) +
                                  " is not a code of " + std::string(f.name) + " (0 to " +
                                  std::to_string(f.code_count() - 1) + ")");
    std::vector<float> table;
    if (f.total_bits <= 16)
        for (std::uint32_t k = 0; k < f.code_count(); ++k) table.push_back(float(emu::decode(f, k)));
    py::gil_scoped_release release;
    for (std::size_t i = 0; i < n; ++i) o[i] = table.empty() ? float(emu::decode(f, std::uint32_t(c[i]))) : table[c[i]];
    return out;
}

py::array round_to(const py::object& x_in, const py::object& fmt, const std::string& rounding,
                   const py::object& saturate, std::uint64_t seed, int random_bits) {
    const emu::Format& f = format_argument(fmt, "fmt");
    const emu::ConvertOptions o = convert_options(rounding, saturate, seed, random_bits);
    const py::array x = float_array(x_in, "x");
    const std::size_t n = std::size_t(x.size());
    if (holds<float>(x)) {
        py::array_t<float> out(shape_of(x));
        const std::span<const float> in(static_cast<const float*>(x.data()), n);
        const std::span<float> dst(out.mutable_data(), n);
        py::gil_scoped_release release;
        emu::round_span(f, in, dst, o);
        return out;
    }
    py::array_t<double> out(shape_of(x));
    const double* in = static_cast<const double*>(x.data());
    double* dst = out.mutable_data();
    py::gil_scoped_release release;
    emu::parallel_for_chunks(n, kChunk, [&](std::size_t, std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) dst[i] = emu::round_to_format(f, in[i], o, i);
    });
    return out;
}

py::object as_ml_dtypes(const py::array& codes, const py::object& fmt) {
    const emu::Format& f = format_argument(fmt, "fmt");
    const std::string name = ml_dtypes_name(f);
    if (name.empty()) throw py::value_error("fmt: ml_dtypes has no dtype for " + std::string(f.name));
    if (!codes.dtype().equal(code_dtype(f)))
        throw py::value_error("codes: must be " + std::string(py::str(code_dtype(f))) + " codes of " +
                              std::string(f.name) + ", not " + std::string(py::str(codes.dtype())));
    if (name == "float16" || name == "float32")
        return codes.attr("view")(py::module_::import("numpy").attr(name.c_str()));
    py::module_ ml;
    try {
        ml = py::module_::import("ml_dtypes");
    } catch (const py::error_already_set&) {
        const std::string why = "as_ml_dtypes: ml_dtypes is not installed here; the codes are plain " +
                                std::string(py::str(codes.dtype())) + " and decode(codes, fmt) gives their values";
        PyErr_SetString(PyExc_ImportError, why.c_str());
        throw py::error_already_set();
    }
    if (!py::hasattr(ml, name.c_str()))
        throw py::value_error("fmt: this ml_dtypes has no " + name + " (an older version?)");
    return codes.attr("view")(ml.attr(name.c_str()));
}

}  // namespace

const emu::Format& format_argument(const py::object& fmt, const char* argument) {
    if (py::isinstance<emu::Format>(fmt)) return fmt.cast<const emu::Format&>();
    if (!py::isinstance<py::str>(fmt))
        throw py::value_error(std::string(argument) + ": must be a format name or fp8lab.Format");
    const std::string name = fmt.cast<std::string>();
    for (const Alias& a : kAliases)
        if (name == a.ml_dtypes) return emu::format_by_name(a.ours);
    if (const emu::Format* f = emu::find_format(name)) return *f;
    std::string known = emu::format_names_list() + " or ml_dtypes' names (";
    for (const Alias& a : kAliases) known += std::string(a.ml_dtypes) + (&a == std::end(kAliases) - 1 ? ")" : ", ");
    throw py::value_error(std::string(argument) + ": " + emu::quoted_input(name) + " is not a format: " + known);
}

std::string ml_dtypes_name(const emu::Format& f) {
    for (const Alias& a : kAliases)
        if (f.name == a.ours) return a.ml_dtypes;
    return "";
}

emu::ConvertOptions convert_options(const std::string& rounding, const py::object& saturate, std::uint64_t seed,
                                    int random_bits) {
    emu::ConvertOptions o;
    const std::optional<emu::RoundingMode> mode = parse_enum<emu::RoundingMode>(rounding);
    if (!mode)
        throw py::value_error("rounding: " + emu::quoted_input(rounding) + " is not " +
                              enum_choices<emu::RoundingMode>());
    o.rounding = *mode;
    if (py::isinstance<py::bool_>(saturate)) {
        o.saturation = saturate.cast<bool>() ? emu::Saturation::Finite : emu::Saturation::None;
    } else if (py::isinstance<py::str>(saturate)) {
        const std::optional<emu::Saturation> s = parse_enum<emu::Saturation>(saturate.cast<std::string>());
        if (!s) throw py::value_error("saturate: must be True, False, " + enum_choices<emu::Saturation>());
        o.saturation = *s;
    } else {
        throw py::value_error("saturate: must be True, False, " + enum_choices<emu::Saturation>());
    }
    if (random_bits < 1 || random_bits > emu::kMaxRandomBits)
        throw py::value_error("random_bits: must be 1 to 32, not " + std::to_string(random_bits));
    o.seed = seed;
    o.random_bits = random_bits;
    return o;
}

py::array as_array(const py::object& x) { return py::module_::import("numpy").attr("asarray")(x); }

py::array float_array(const py::object& x_object, const char* argument) {
    const py::array x = as_array(x_object);
    if (holds<float>(x)) return c_order<float>(x);
    if (holds<double>(x)) return c_order<double>(x);
    throw py::value_error(std::string(argument) + ": must be float32 or float64, not " +
                          std::string(py::str(x.dtype())) + " (convert with .astype(numpy.float32) or numpy.float64)");
}

void add_formats(py::module_& m) {
    py::class_<emu::Format>(m, "Format", "A number format: its layout and the values it reaches")
        .def_property_readonly("name", [](const emu::Format& f) { return std::string(f.name); })
        .def_property_readonly("display_name", [](const emu::Format& f) { return std::string(f.display_name); })
        .def_property_readonly("ml_dtypes_name", &ml_dtypes_name)
        .def_readonly("bits", &emu::Format::total_bits)
        .def_readonly("exponent_bits", &emu::Format::exponent_bits)
        .def_readonly("mantissa_bits", &emu::Format::mantissa_bits)
        .def_readonly("bias", &emu::Format::bias)
        .def_readonly("has_sign", &emu::Format::has_sign)
        .def_readonly("has_inf", &emu::Format::has_inf)
        .def_readonly("has_nan", &emu::Format::has_nan)
        .def_readonly("max", &emu::Format::max_finite)
        .def_readonly("min_normal", &emu::Format::min_normal)
        .def_readonly("min_subnormal", &emu::Format::min_subnormal)
        .def_readonly("max_magnitude_code", &emu::Format::max_magnitude_code)
        .def_readonly("nan_code", &emu::Format::nan_code)
        .def("__repr__", [](const emu::Format& f) { return "fp8lab.format('" + std::string(f.name) + "')"; })
        .def("__eq__", [](const emu::Format& a, const emu::Format& b) { return &a == &b; });
    m.def(
        "formats",
        [] {
            std::vector<const emu::Format*> all;
            for (const emu::Format& f : emu::all_formats()) all.push_back(&f);
            return all;
        },
        py::return_value_policy::reference, "Every format fp8lab knows");
    m.def(
        "format", [](const py::object& name) { return &format_argument(name, "name"); },
        py::return_value_policy::reference, py::arg("name"),
        "A format by fp8lab's name ('e4m3') or ml_dtypes' ('float8_e4m3fn')");
    m.def("encode", &encode, py::arg("x"), py::arg("fmt"), py::arg("rounding") = "nearest-even",
          py::arg("saturate") = true, py::arg("seed") = 0, py::arg("random_bits") = 32, py::arg("out") = py::none(),
          "Codes of x (float32 or float64, any shape) in fmt: uint8, uint16 for 16-bit formats. A float64 is rounded "
          "once. Stochastic rounding draws element i's bits from (seed, i). `out`: an array to write the codes into "
          "(saves allocating one per call).");
    m.def("decode", &decode, py::arg("codes"), py::arg("fmt"), "The values of codes, as float32 (exact)");
    m.def("round_to", &round_to, py::arg("x"), py::arg("fmt"), py::arg("rounding") = "nearest-even",
          py::arg("saturate") = true, py::arg("seed") = 0, py::arg("random_bits") = 32,
          "x after the round trip through fmt, in x's dtype");
    m.def("as_ml_dtypes", &as_ml_dtypes, py::arg("codes"), py::arg("fmt"),
          "A view of the codes in ml_dtypes' dtype for fmt (ImportError when ml_dtypes is not installed)");
    m.def("rounding_modes", [] {
        std::vector<std::string> names;
        for (const auto& n : enum_names<emu::RoundingMode>()) names.emplace_back(n.name);
        return names;
    });
}

}  // namespace fp8lab::python
