// SPDX-License-Identifier: Apache-2.0
// The transformer's operations against float64 references written here, and their
// gradients against float64 central differences of those references.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "emulator/base/stochastic_bits.hpp"
#include "emulator/training/training_task.hpp"
#include "emulator/models/transformer/transformer_ops.hpp"

using namespace fp8lab::emu;

namespace {

using Fn = std::function<std::vector<double>(const std::vector<double>&)>;

std::vector<float> random_values(std::size_t n, std::uint64_t seed, float scale = 1.0f) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = scale * normal_sample(seed, i);
    return v;
}
std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// d/dx_i of sum_j w_j f(x)_j by central differences in float64.
std::vector<double> numeric_gradient(const Fn& f, std::vector<double> x, const std::vector<float>& w) {
    std::vector<double> g(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double h = 1e-6 * std::max(1.0, std::fabs(x[i])), keep = x[i];
        x[i] = keep + h;
        const std::vector<double> up = f(x);
        x[i] = keep - h;
        const std::vector<double> down = f(x);
        x[i] = keep;
        double s = 0;
        for (std::size_t j = 0; j < up.size(); ++j) s += w[j] * (up[j] - down[j]);
        g[i] = s / (2 * h);
    }
    return g;
}

template <class A, class B>
void check_close(const A& got, const B& want, double relative, double absolute) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        CAPTURE(i);
        CHECK(std::fabs(double(got[i]) - double(want[i])) <= absolute + relative * std::fabs(double(want[i])));
    }
}

std::vector<double> rmsnorm_reference(const std::vector<double>& x, const std::vector<double>& gain, int rows, int d) {
    std::vector<double> y(x.size());
    for (int r = 0; r < rows; ++r) {
        double s = 0;
        for (int c = 0; c < d; ++c) s += x[r * d + c] * x[r * d + c];
        const double inv = 1 / std::sqrt(s / d + kRmsNormEpsilon);
        for (int c = 0; c < d; ++c) y[r * d + c] = x[r * d + c] * inv * gain[c];
    }
    return y;
}

// Causal grouped-query attention in float64: q rows x heads*hs, k and v rows x kv*hs.
std::vector<double> attention_reference(const AttentionShape& s, const std::vector<double>& q,
                                        const std::vector<double>& k, const std::vector<double>& v) {
    const int n = s.sequence, hs = s.head_size, qw = s.heads * hs, kw = s.kv_heads * hs;
    std::vector<double> out(std::size_t(s.rows()) * qw, 0.0);
    for (int seq = 0; seq < s.sequences; ++seq)
        for (int h = 0; h < s.heads; ++h) {
            const int kvh = h / (s.heads / s.kv_heads);
            for (int i = 0; i < n; ++i) {
                std::vector<double> p(std::size_t(i) + 1);
                double top = -1e300, sum = 0;
                for (int j = 0; j <= i; ++j) {
                    double dot = 0;
                    for (int c = 0; c < hs; ++c)
                        dot += q[(seq * n + i) * qw + h * hs + c] * k[(seq * n + j) * kw + kvh * hs + c];
                    p[j] = dot / std::sqrt(double(hs));
                    top = std::max(top, p[j]);
                }
                for (double& x : p) sum += x = std::exp(x - top);
                for (int j = 0; j <= i; ++j)
                    for (int c = 0; c < hs; ++c)
                        out[(seq * n + i) * qw + h * hs + c] += p[j] / sum * v[(seq * n + j) * kw + kvh * hs + c];
            }
        }
    return out;
}

}  // namespace

TEST_CASE("RMSNorm: forward against float64, backward against central differences") {
    const int rows = 5, d = 12;
    const std::vector<float> x = random_values(rows * d, 1, 3.0f), gain = random_values(d, 2),
                             w = random_values(rows * d, 3);
    std::vector<float> y(x.size()), inv(rows), dx(x.size()), dgain(d);
    rmsnorm_forward(x.data(), gain.data(), rows, d, y.data(), inv.data());
    check_close(y, rmsnorm_reference(widen(x), widen(gain), rows, d), 1e-5, 1e-6);
    rmsnorm_backward(x.data(), gain.data(), inv.data(), w.data(), rows, d, dx.data(), dgain.data());
    const std::vector<double> g = widen(gain), xs = widen(x);
    check_close(
        dx, numeric_gradient([&](const std::vector<double>& xx) { return rmsnorm_reference(xx, g, rows, d); }, xs, w),
        1e-4, 1e-5);
    check_close(
        dgain,
        numeric_gradient([&](const std::vector<double>& gg) { return rmsnorm_reference(xs, gg, rows, d); }, g, w), 1e-4,
        1e-5);
}

TEST_CASE("rotary embedding: pairs turned by position; the inverse is the backward pass") {
    const int sequence = 6, heads = 2, hs = 8, rows = 2 * sequence;
    const RotaryTable t = rotary_table(sequence, hs);
    const std::vector<float> x = random_values(std::size_t(rows) * heads * hs, 4);
    std::vector<float> y = x;
    rotary_apply(y.data(), rows, heads, hs, t, false);
    for (int r = 0; r < rows; ++r)
        for (int h = 0; h < heads; ++h)
            for (int i = 0; i < hs / 2; ++i) {
                const double angle = (r % sequence) * std::pow(10000.0, -2.0 * i / hs);
                const std::size_t o = (std::size_t(r) * heads + h) * hs;
                CHECK(y[o + i] ==
                      doctest::Approx(x[o + i] * std::cos(angle) - x[o + i + hs / 2] * std::sin(angle)).epsilon(1e-5));
                CHECK(y[o + i + hs / 2] ==
                      doctest::Approx(x[o + i + hs / 2] * std::cos(angle) + x[o + i] * std::sin(angle)).epsilon(1e-5));
            }
    // A rotation's backward pass is its transpose: <R x, w> = <x, R^T w>.
    const std::vector<float> w = random_values(x.size(), 5);
    std::vector<float> back = w;
    rotary_apply(back.data(), rows, heads, hs, t, true);
    double left = 0, right = 0;
    for (std::size_t i = 0; i < x.size(); ++i) left += double(y[i]) * w[i], right += double(x[i]) * back[i];
    CHECK(left == doctest::Approx(right).epsilon(1e-5));
}

TEST_CASE("grouped-query causal attention: forward and every gradient against float64") {
    const AttentionShape s{2, 5, 4, 2, 4};
    const int qw = s.heads * s.head_size, kw = s.kv_heads * s.head_size;
    const std::vector<float> q = random_values(std::size_t(s.rows()) * qw, 6),
                             k = random_values(std::size_t(s.rows()) * kw, 7),
                             v = random_values(std::size_t(s.rows()) * kw, 8),
                             w = random_values(std::size_t(s.rows()) * qw, 9);
    std::vector<float> probs(std::size_t(s.sequences) * s.heads * s.sequence * s.sequence), out(q.size());
    attention_forward(s, q.data(), k.data(), v.data(), false, probs.data(), out.data());
    const std::vector<double> qd = widen(q), kd = widen(k), vd = widen(v);
    check_close(out, attention_reference(s, qd, kd, vd), 1e-5, 1e-6);
    std::vector<float> dq(q.size()), dk(k.size()), dv(v.size());
    attention_backward(s, q.data(), k.data(), v.data(), probs.data(), w.data(), false, dq.data(), dk.data(), dv.data());
    check_close(
        dq, numeric_gradient([&](const std::vector<double>& x) { return attention_reference(s, x, kd, vd); }, qd, w),
        1e-4, 1e-5);
    check_close(
        dk, numeric_gradient([&](const std::vector<double>& x) { return attention_reference(s, qd, x, vd); }, kd, w),
        1e-4, 1e-5);
    check_close(
        dv, numeric_gradient([&](const std::vector<double>& x) { return attention_reference(s, qd, kd, x); }, vd, w),
        1e-4, 1e-5);
}

TEST_CASE("attention is causal: a later key or value changes no earlier output") {
    const AttentionShape s{1, 6, 2, 1, 4};
    std::vector<float> q = random_values(6 * 8, 10), k = random_values(6 * 4, 11), v = random_values(6 * 4, 12);
    std::vector<float> probs(2 * 36), before(q.size()), after(q.size());
    attention_forward(s, q.data(), k.data(), v.data(), true, probs.data(), before.data());
    for (int c = 0; c < 4; ++c) k[5 * 4 + c] += 3.0f, v[5 * 4 + c] -= 2.0f;
    attention_forward(s, q.data(), k.data(), v.data(), true, probs.data(), after.data());
    for (int i = 0; i < 5 * 8; ++i) CHECK(before[std::size_t(i)] == after[std::size_t(i)]);
    bool last_changed = false;
    for (int i = 5 * 8; i < 6 * 8; ++i) last_changed = last_changed || before[std::size_t(i)] != after[std::size_t(i)];
    CHECK(last_changed);
}

TEST_CASE("SwiGLU: forward and gradient against float64") {
    const int rows = 4, f = 6;
    const std::vector<float> x = random_values(rows * 2 * f, 13, 2.0f), w = random_values(rows * f, 14);
    const Fn reference = [&](const std::vector<double>& gu) {
        std::vector<double> out(std::size_t(rows) * f);
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < f; ++c) {
                const double g = gu[r * 2 * f + c], u = gu[r * 2 * f + f + c];
                out[r * f + c] = g / (1 + std::exp(-g)) * u;
            }
        return out;
    };
    std::vector<float> out(std::size_t(rows) * f), dx(x.size());
    swiglu_forward(x.data(), rows, f, out.data(), false);
    check_close(out, reference(widen(x)), 1e-5, 1e-6);
    swiglu_backward(x.data(), w.data(), rows, f, dx.data(), false);
    check_close(dx, numeric_gradient(reference, widen(x), w), 1e-4, 1e-5);
}

TEST_CASE("SwiGLU: with BF16 gates, the looked-up sigmoid gives the bits of the computed one, for every BF16 gate") {
    // One row per 256 gates: all 65536 BF16 values (NaN and infinities included) as gates,
    // each beside an up value and an output gradient of its own.
    const int f = 256, rows = 65536 / f;
    std::vector<float> gate_up(std::size_t(rows) * 2 * f);
    const std::vector<float> up = random_values(rows * f, 16, 3.0f), dout = random_values(rows * f, 17);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < f; ++c) {
            gate_up[std::size_t(r) * 2 * f + c] = std::bit_cast<float>(std::uint32_t(r * f + c) << 16);
            gate_up[std::size_t(r) * 2 * f + f + c] = up[std::size_t(r) * f + c];
        }
    std::vector<float> computed(std::size_t(rows) * f), looked_up(computed.size());
    swiglu_forward(gate_up.data(), rows, f, computed.data(), false);
    swiglu_forward(gate_up.data(), rows, f, looked_up.data(), true);
    CHECK(std::memcmp(computed.data(), looked_up.data(), computed.size() * sizeof(float)) == 0);
    std::vector<float> d_computed(gate_up.size()), d_looked_up(gate_up.size());
    swiglu_backward(gate_up.data(), dout.data(), rows, f, d_computed.data(), false);
    swiglu_backward(gate_up.data(), dout.data(), rows, f, d_looked_up.data(), true);
    CHECK(std::memcmp(d_computed.data(), d_looked_up.data(), d_computed.size() * sizeof(float)) == 0);
}

TEST_CASE("cross-entropy: the mean negative log-likelihood and its gradient against float64") {
    const int rows = 3, vocab = 7;
    const std::vector<float> z = random_values(rows * vocab, 15, 4.0f);
    const std::vector<std::uint8_t> targets = {2, 6, 0};
    const Fn reference = [&](const std::vector<double>& logits) {
        double total = 0;
        for (int r = 0; r < rows; ++r) {
            double sum = 0;
            for (int c = 0; c < vocab; ++c) sum += std::exp(logits[r * vocab + c]);
            total += std::log(sum) - logits[r * vocab + targets[r]];
        }
        return std::vector<double>{total / rows};
    };
    std::vector<float> grad(z.size());
    const double loss = cross_entropy(z.data(), targets.data(), rows, vocab, grad.data(), 1.0f);
    CHECK(loss == doctest::Approx(reference(widen(z))[0]).epsilon(1e-6));
    check_close(grad, numeric_gradient(reference, widen(z), {1.0f}), 1e-4, 1e-6);
    // The loss scale multiplies the gradient only.
    std::vector<float> scaled(z.size());
    CHECK(cross_entropy(z.data(), targets.data(), rows, vocab, scaled.data(), 1024.0f) == loss);
    for (std::size_t i = 0; i < z.size(); ++i) CHECK(scaled[i] == grad[i] * 1024.0f);
}
