// SPDX-License-Identifier: Apache-2.0
// The Cairo back end of the layouts (cairo_canvas.hpp).
#include "app/export/cairo_canvas.hpp"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>

#include <cmath>
#include <stdexcept>
#include <string_view>
#include <variant>

#include "app/files/atomic_file.hpp"

namespace fp8lab::exporter {
namespace {

using plot::Primitive;

constexpr const char* kFont = "DejaVu Sans";

void set_paint(cairo_t* cr, plot::Paint p) {
    cairo_set_source_rgba(cr, p.colour.r / 255.0, p.colour.g / 255.0, p.colour.b / 255.0, p.alpha);
}

void font(cairo_t* cr, double size, bool bold) {
    cairo_select_font_face(cr, kFont, CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

void add_sub_path(cairo_t* cr, const plot::SubPath& part, bool first) {
    using Kind = plot::SubPath::Kind;
    switch (part.kind) {
    case Kind::Open:
    case Kind::Closed:
        for (std::size_t i = 0; i < part.points.size(); ++i)
            (i == 0 ? cairo_move_to : cairo_line_to)(cr, part.points[i].x, part.points[i].y);
        if (part.kind == Kind::Closed) cairo_close_path(cr);
        return;
    case Kind::Strip:
        for (std::size_t i = 0; i < part.points.size(); ++i)
            (i == 0 ? cairo_move_to : cairo_line_to)(cr, part.points[i].x, part.points[i].y);
        for (std::size_t i = part.lower.size(); i-- > 0;) cairo_line_to(cr, part.lower[i].x, part.lower[i].y);
        cairo_close_path(cr);
        return;
    case Kind::Rectangle:
        cairo_rectangle(cr, part.rect.x, part.rect.y, part.rect.width, part.rect.height);
        return;
    case Kind::Circle:
        // The first circle of a path continues from the current point, as an arc does; the
        // segment that adds encloses nothing.
        if (!first) cairo_new_sub_path(cr);
        cairo_arc(cr, part.points[0].x, part.points[0].y, part.radius, 0, 2 * M_PI);
        return;
    }
}

void draw_path(cairo_t* cr, const plot::Path& path) {
    for (std::size_t i = 0; i < path.parts.size(); ++i) add_sub_path(cr, path.parts[i], i == 0);
    if (path.fill) {
        set_paint(cr, *path.fill);
        if (path.stroke)
            cairo_fill_preserve(cr);
        else
            cairo_fill(cr);
    }
    if (!path.stroke) return;
    set_paint(cr, path.stroke->paint);
    cairo_set_line_width(cr, path.stroke->width);
    if (path.stroke->dashed()) {
        const double dash[] = {path.stroke->dash_on, path.stroke->dash_off};
        cairo_set_dash(cr, dash, 2, 0);
    }
    cairo_stroke(cr);
    cairo_set_dash(cr, nullptr, 0, 0);
}

void draw_text(cairo_t* cr, const plot::Text& t) {
    font(cr, t.size, t.bold);
    set_paint(cr, t.paint);
    if (!t.vertical) {
        cairo_move_to(cr, t.baseline_start.x, t.baseline_start.y);
        cairo_show_text(cr, t.text.c_str());
        return;
    }
    cairo_save(cr);
    cairo_move_to(cr, t.baseline_start.x, t.baseline_start.y);
    cairo_rotate(cr, -M_PI / 2);
    cairo_show_text(cr, t.text.c_str());
    cairo_restore(cr);
}

void draw(cairo_t* cr, const Primitive& p) {
    if (const auto* clear = std::get_if<plot::Clear>(&p)) {
        set_paint(cr, {clear->colour, 1});
        cairo_paint(cr);
    } else if (const auto* path = std::get_if<plot::Path>(&p)) {
        draw_path(cr, *path);
    } else if (const auto* text = std::get_if<plot::Text>(&p)) {
        draw_text(cr, *text);
    } else if (const auto* clip = std::get_if<plot::ClipBegin>(&p)) {
        cairo_save(cr);
        cairo_rectangle(cr, clip->rect.x, clip->rect.y, clip->rect.width, clip->rect.height);
        cairo_clip(cr);
    } else if (std::holds_alternative<plot::ClipEnd>(p)) {
        cairo_restore(cr);
    }
}

// Cairo writes into memory; the file is written whole by write_file_atomically.
cairo_status_t append_to_string(void* closure, const unsigned char* data, unsigned int length) {
    static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
    return CAIRO_STATUS_SUCCESS;
}
}  // namespace

double CairoMetrics::width(std::string_view text, double size, bool bold) const {
    font(cr_, size, bold);
    const std::string s(text);
    cairo_text_extents_t e;
    cairo_text_extents(cr_, s.c_str(), &e);
    return e.x_advance;
}

void draw_primitives(cairo_t* cr, const std::vector<plot::Primitive>& primitives) {
    for (const Primitive& p : primitives) draw(cr, p);
}

const char* extension(ImageFormat f) {
    switch (f) {
    case ImageFormat::Svg:
        return "svg";
    case ImageFormat::Png:
        return "png";
    case ImageFormat::Pdf:
        return "pdf";
    }
    return "";
}

void write_image(const std::string& path, ImageFormat format, int width, int height, double png_scale,
                 const std::function<void(cairo_t*)>& draw) {
    if (!(png_scale > 0)) throw std::invalid_argument("write_image: the PNG scale must be positive");
    std::string bytes;
    cairo_surface_t* surface = nullptr;
    switch (format) {
    case ImageFormat::Svg:
        surface = cairo_svg_surface_create_for_stream(append_to_string, &bytes, width, height);
        break;
    case ImageFormat::Pdf:
        surface = cairo_pdf_surface_create_for_stream(append_to_string, &bytes, width, height);
        break;
    case ImageFormat::Png:
        surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, int(std::lround(width * png_scale)),
                                             int(std::lround(height * png_scale)));
        break;
    }
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
        const std::string why = cairo_status_to_string(cairo_surface_status(surface));
        cairo_surface_destroy(surface);
        throw std::runtime_error(path + ": " + why);
    }
    cairo_t* cr = cairo_create(surface);
    if (format == ImageFormat::Png) cairo_scale(cr, png_scale, png_scale);  // the same layout, more pixels
    draw(cr);
    cairo_destroy(cr);
    cairo_status_t status = CAIRO_STATUS_SUCCESS;
    if (format == ImageFormat::Png) status = cairo_surface_write_to_png_stream(surface, append_to_string, &bytes);
    cairo_surface_finish(surface);
    if (status == CAIRO_STATUS_SUCCESS) status = cairo_surface_status(surface);
    cairo_surface_destroy(surface);
    if (status != CAIRO_STATUS_SUCCESS) throw std::runtime_error(path + ": " + cairo_status_to_string(status));
    files::write_file_atomically(path, bytes);
}

}  // namespace fp8lab::exporter
