// SPDX-License-Identifier: Apache-2.0
// Text widths a test can predict: every character 0.6 of the text size wide (bold 0.7).
#pragma once

#include <string_view>

#include "app/plot/figure_layout.hpp"

namespace fp8lab::test {

class FixedMetrics final : public plot::TextMetrics {
  public:
    double width(std::string_view text, double size, bool bold) const override {
        return double(text.size()) * size * (bold ? 0.7 : 0.6);
    }
};

}  // namespace fp8lab::test
