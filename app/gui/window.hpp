// SPDX-License-Identifier: Apache-2.0
// The desktop window: GLFW, an OpenGL 3.3 context, and Dear ImGui's GLFW/OpenGL3 backends.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct GLFWwindow;

namespace fp8lab::gui {

class Window {
  public:
    // Throws std::runtime_error with GLFW's reason (no display, no OpenGL 3.3). With
    // `fit_to_screen` the size is capped at the primary monitor's work area (the screen less
    // its panels, and room for a title bar), so that a laptop's screen shows the whole window.
    Window(int width, int height, const std::string& title, bool fit_to_screen = false);
    ~Window();
    Window(const Window&) = delete;
    Window& operator=(const Window&) = delete;

    bool should_close() const;
    // How long begin_frame may sleep for events: not at all (the tour), a thirtieth of a
    // second (a running step's progress bar), or until something happens (idle: the app
    // draws nothing while nothing changes; wake() ends the wait from any thread).
    enum class Wait { None, Briefly, UntilEvent };
    // Processes events (after waiting as told) and starts an ImGui frame.
    void begin_frame(Wait wait);
    // Ends a begin_frame's wait, from any thread (a worker that finished, the GPU probe).
    static void wake();
    // Renders ImGui's draw data over the clear colour into the back buffer, which stays
    // readable for a screenshot until present(). Without vsync it waits for the GPU (Mesa's
    // llvmpipe rasterises on the CPU), so the time around it is the frame's real cost.
    void render(float r, float g, float b);
    void present();
    float content_scale() const;               // the monitor's, 1 where unknown
    void size(int& width, int& height) const;  // the window's, in screen coordinates
    // The back buffer as RGBA rows, top row first.
    std::vector<std::uint8_t> read_pixels(int& width, int& height) const;
    void set_vsync(bool on);

  private:
    GLFWwindow* window_ = nullptr;
    bool vsync_ = true;
};

// Writes RGBA pixels (top row first) as a PNG; throws std::runtime_error naming the file.
void write_png(const std::string& path, const std::vector<std::uint8_t>& rgba, int width, int height);

}  // namespace fp8lab::gui
