// SPDX-License-Identifier: Apache-2.0
// GLFW window and ImGui backends; screenshots through glReadPixels and Cairo's PNG writer.
#include "app/gui/window.hpp"

#include "app/files/atomic_file.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <GL/gl.h>
#include <cairo.h>
#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>

namespace fp8lab::gui {
namespace {

std::string g_glfw_error;
std::atomic<bool> g_window_open{false};  // glfwPostEmptyEvent is valid only between init and terminate
void on_glfw_error(int code, const char* text) { g_glfw_error = "GLFW error " + std::to_string(code) + ": " + text; }

}  // namespace

Window::Window(int width, int height, const std::string& title, bool fit_to_screen) {
    glfwSetErrorCallback(on_glfw_error);
    if (!glfwInit())
        throw std::runtime_error("cannot open a window: " + g_glfw_error +
                                 " (is a display available? Under CI use xvfb-run)");
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
    if (GLFWmonitor* monitor = fit_to_screen ? glfwGetPrimaryMonitor() : nullptr) {
        int x = 0, y = 0, w = 0, h = 0;
        glfwGetMonitorWorkarea(monitor, &x, &y, &w, &h);
        constexpr int kTitleBar = 40;  // a window manager's decorations sit outside the size asked for
        if (w > 0 && h > kTitleBar) {
            width = std::max(640, std::min(width, w));
            height = std::max(400, std::min(height, h - kTitleBar));
        }
    }
    window_ = glfwCreateWindow(width, height, title.c_str(), nullptr, nullptr);
    if (!window_) {
        glfwTerminate();
        throw std::runtime_error("cannot create an OpenGL 3.3 window: " + g_glfw_error);
    }
    glfwMakeContextCurrent(window_);
    glfwSwapInterval(1);
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;  // layout is computed, not remembered
    ImGui_ImplGlfw_InitForOpenGL(window_, true);
    ImGui_ImplOpenGL3_Init("#version 330 core");
    g_window_open = true;
}

void Window::size(int& width, int& height) const { glfwGetWindowSize(window_, &width, &height); }

Window::~Window() {
    g_window_open = false;
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window_);
    glfwTerminate();
}

void Window::wake() {
    if (g_window_open) glfwPostEmptyEvent();
}

bool Window::should_close() const { return glfwWindowShouldClose(window_); }

void Window::begin_frame(Wait wait) {
    if (wait == Wait::UntilEvent)
        glfwWaitEvents();
    else if (wait == Wait::Briefly)
        glfwWaitEventsTimeout(1.0 / 30);
    else
        glfwPollEvents();
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
}

void Window::render(float r, float g, float b) {
    ImGui::Render();
    int w = 0, h = 0;
    glfwGetFramebufferSize(window_, &w, &h);
    glViewport(0, 0, w, h);
    glClearColor(r, g, b, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (!vsync_) glFinish();
}

void Window::present() { glfwSwapBuffers(window_); }

float Window::content_scale() const {
    float x = 1, y = 1;
    glfwGetWindowContentScale(window_, &x, &y);
    return x > 0 ? x : 1;
}

void Window::set_vsync(bool on) {
    vsync_ = on;
    glfwSwapInterval(on ? 1 : 0);
}

std::vector<std::uint8_t> Window::read_pixels(int& width, int& height) const {
    glfwGetFramebufferSize(window_, &width, &height);
    std::vector<std::uint8_t> bottom_up(std::size_t(width) * std::size_t(height) * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, bottom_up.data());
    std::vector<std::uint8_t> rows(bottom_up.size());
    const std::size_t stride = std::size_t(width) * 4;
    for (int y = 0; y < height; ++y)
        std::memcpy(&rows[std::size_t(y) * stride], &bottom_up[std::size_t(height - 1 - y) * stride], stride);
    return rows;
}

void write_png(const std::string& path, const std::vector<std::uint8_t>& rgba, int width, int height) {
    cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
    cairo_surface_flush(surface);
    unsigned char* data = cairo_image_surface_get_data(surface);
    const int stride = cairo_image_surface_get_stride(surface);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            const std::uint8_t* p = &rgba[(std::size_t(y) * std::size_t(width) + std::size_t(x)) * 4];
            const std::uint32_t pixel = (std::uint32_t(p[0]) << 16) | (std::uint32_t(p[1]) << 8) | p[2];
            std::memcpy(data + std::size_t(y) * std::size_t(stride) + std::size_t(x) * 4, &pixel, 4);
        }
    cairo_surface_mark_dirty(surface);
    // Encoded in memory, then written as every file is: complete or not at all.
    std::string png;
    const cairo_status_t status = cairo_surface_write_to_png_stream(
        surface,
        [](void* closure, const unsigned char* bytes, unsigned int length) {
            static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(bytes), length);
            return CAIRO_STATUS_SUCCESS;
        },
        &png);
    cairo_surface_destroy(surface);
    if (status != CAIRO_STATUS_SUCCESS) throw std::runtime_error(path + ": " + cairo_status_to_string(status));
    files::write_file_atomically(path, png);
}

}  // namespace fp8lab::gui
