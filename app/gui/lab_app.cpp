// SPDX-License-Identifier: Apache-2.0
// The shell: window and main loop, layout (menu, navigator, step view, training panel,
// status line), presenter keys, presentation mode, blank screen, zoom and themes.
#include "app/gui/lab_app.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <imgui.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <optional>
#include <string>

#include "app/options/usage_error.hpp"
#include "app/gui/app_state.hpp"
#include "app/gui/plot.hpp"
#include "app/gui/tour.hpp"
#include "app/gui/window.hpp"
#include "emulator/base/quoted_input.hpp"
#include "labs/framework/step_link.hpp"
#include "labs/framework/progress.hpp"
#include "app/files/atomic_file.hpp"
#include "labs/logic/curriculum.hpp"

namespace fp8lab::gui {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

bool pressed(int key) { return ImGui::IsKeyPressed(key, false); }

void set_zoom(AppState& app, float zoom) {
    app.settings.scale = std::clamp(std::round(zoom * 10) / 10, 0.5f, 4.0f);
    app.looks.rebuild_fonts = true;
    app.save_settings_now();
}

void handle_keys(AppState& app) {
    const ImGuiIO& io = ImGui::GetIO();
    if (io.KeyCtrl) {
        if (pressed(GLFW_KEY_EQUAL) || pressed(GLFW_KEY_KP_ADD)) set_zoom(app, app.settings.scale + 0.1f);
        if (pressed(GLFW_KEY_MINUS) || pressed(GLFW_KEY_KP_SUBTRACT)) set_zoom(app, app.settings.scale - 0.1f);
        if (pressed(GLFW_KEY_0)) set_zoom(app, 1.0f);
        return;
    }
    if (pressed(GLFW_KEY_F5)) {
        app.looks.presentation = !app.looks.presentation;
        app.looks.rebuild_fonts = true;
    }
    if (pressed(GLFW_KEY_ESCAPE)) {
        if (app.looks.blank)
            app.looks.blank = false;
        else if (app.looks.presentation) {
            app.looks.presentation = false;
            app.looks.rebuild_fonts = true;
        }
    }
    if (pressed(GLFW_KEY_F6)) app.training.open = !app.training.open;
    if (pressed(GLFW_KEY_F7)) {
        app.training.open = true;
        app.training.full_window = !app.training.full_window;
    }
    if (io.WantTextInput) return;  // typing an answer: letters and arrows belong to the field
    if (pressed(GLFW_KEY_B) || pressed(GLFW_KEY_PERIOD)) app.looks.blank = !app.looks.blank;
    if (pressed(GLFW_KEY_T)) app.looks.projector_tooltips = !app.looks.projector_tooltips;
    if (app.inspector_open) return;
    const bool forward =
        pressed(GLFW_KEY_PAGE_DOWN) || pressed(GLFW_KEY_RIGHT) || pressed(GLFW_KEY_SPACE) || pressed(GLFW_KEY_N);
    const bool back =
        pressed(GLFW_KEY_PAGE_UP) || pressed(GLFW_KEY_LEFT) || pressed(GLFW_KEY_BACKSPACE) || pressed(GLFW_KEY_P);
    if (forward) {
        if (app.looks.presentation && app.looks.paging.more_below())
            app.looks.paging.request = 1;
        else
            app.next();
    }
    if (back) {
        if (app.looks.presentation && app.looks.paging.more_above())
            app.looks.paging.request = -1;
        else
            app.previous();
    }
    if (pressed(GLFW_KEY_HOME)) app.go_to(app.course.lab, 0);
    if (pressed(GLFW_KEY_END)) app.go_to(app.course.lab, int(app.course.current_lab().steps.size()) - 1);
}

// Writes ~/fp8lab-progress-USER-N.txt (never over an earlier one) for the instructor's
// `fp8lab progress FILE...`.
void export_progress(AppState& app) {
    const char* home = std::getenv("HOME");
    const char* user = std::getenv("USER");
    labs::ProgressFile file;
    file.student = user && *user ? user : "student";
    file.solved = app.settings.solved;
    try {
        const std::string stem =
            (std::filesystem::path(home && *home ? home : ".") / ("fp8lab-progress-" + file.student)).string();
        const std::string path = files::write_numbered_file(stem, ".txt", labs::progress_file_text(file));
        app.status = "Progress exported to " + path + " (fp8lab progress FILE... summarises such files)";
    } catch (const std::exception& e) {
        app.status = std::string("Exporting progress failed: ") + e.what();
    }
}

void draw_menu(AppState& app) {
    if (!ImGui::BeginMenuBar()) return;
    if (ImGui::BeginMenu("View")) {
        for (const EnumName<Theme>& n : enum_names<Theme>()) {
            const Theme t = n.value;
            const std::string label = "Theme: " + std::string(n.name);
            if (ImGui::MenuItem(label.c_str(), nullptr, app.looks.theme == t)) {
                app.looks.theme = t;
                app.settings.theme = std::string(n.name);
                app.looks.rebuild_fonts = true;
                app.save_settings_now();
            }
        }
        ImGui::Separator();
        if (ImGui::MenuItem("Zoom in", "Ctrl +")) set_zoom(app, app.settings.scale + 0.1f);
        if (ImGui::MenuItem("Zoom out", "Ctrl -")) set_zoom(app, app.settings.scale - 0.1f);
        if (ImGui::MenuItem("Actual size", "Ctrl 0")) set_zoom(app, 1.0f);
        ImGui::Separator();
        if (ImGui::MenuItem("Presentation mode", "F5", app.looks.presentation)) {
            app.looks.presentation = !app.looks.presentation;
            app.looks.rebuild_fonts = true;
        }
        if (ImGui::MenuItem("Blank the screen", "B")) app.looks.blank = true;
        if (ImGui::MenuItem("Plot tooltips in presentation mode", "T", app.looks.projector_tooltips))
            app.looks.projector_tooltips = !app.looks.projector_tooltips;
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Progress")) {
        if (ImGui::MenuItem("Export progress")) export_progress(app);
        if (ImGui::MenuItem("Reset progress...")) app.confirm_reset = true;
        ImGui::EndMenu();
    }
    if (ImGui::MenuItem("Bit inspector", nullptr, app.inspector_open)) app.inspector_open = !app.inspector_open;
    if (ImGui::MenuItem("Training panel", nullptr, app.training.open)) app.training.open = !app.training.open;
    ImGui::EndMenuBar();
}

// "Reset progress" forgets every solved exercise, after a confirmation.
void draw_reset_confirmation(AppState& app) {
    if (app.confirm_reset) {
        ImGui::OpenPopup("Reset progress?");
        app.confirm_reset = false;
    }
    if (!ImGui::BeginPopupModal("Reset progress?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
    ImGui::Text("Forget all %zu solved exercises? Export your progress first to keep a copy.",
                app.settings.solved.size());
    if (ImGui::Button("Reset")) {
        app.settings.solved.clear();
        app.save_settings_now();
        app.status = "Progress reset: no exercise is marked solved.";
        ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
}

void draw_frame(AppState& app) {
    const ImGuiViewport* viewport = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(viewport->Pos);
    ImGui::SetNextWindowSize(viewport->Size);
    if (app.looks.blank) {
        ImGui::PushStyleColor(ImGuiCol_WindowBg, ImVec4(0, 0, 0, 1));
        ImGui::Begin("blank", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove);
        ImGui::End();
        ImGui::PopStyleColor();
        return;
    }
    // No background of its own: the frame is cleared to the window colour, and under a
    // software renderer (llvmpipe, most student laptops in a VM) every full-window fill
    // costs milliseconds.
    ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                             ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoBackground;
    if (!app.looks.presentation) flags |= ImGuiWindowFlags_MenuBar;
    ImGui::Begin("fp8lab", nullptr, flags);
    if (!app.looks.presentation) draw_menu(app);
    const float fs = ImGui::GetFontSize();
    const float status_h = app.looks.presentation ? 0 : ImGui::GetTextLineHeightWithSpacing();
    if (!app.looks.presentation) {
        ImGui::BeginChild("navigator", ImVec2(fs * 17, -status_h), true);
        const NavigatorChoice choice = draw_navigator(app.course, app.settings.solved, app.inspector_open);
        if (choice.step) app.go_to(choice.step->first, choice.step->second);
        if (choice.inspector) app.inspector_open = true;
        ImGui::EndChild();
        ImGui::SameLine();
    }
    // The training panel beside the step, or in its place (full window: what a projector
    // shows of a run, its curves and numbers at the size of a step's figure).
    const bool training = app.training.open;
    const bool training_only = training && app.training.full_window;
    app.training.drawn = training;
    if (!training_only) {
        ImGui::BeginChild("main", ImVec2(training ? -fs * 30 : 0, -status_h), false);
        if (app.course.catalog.labs.empty() || app.inspector_open)
            draw_bit_inspector(app.inspector, app.looks);
        else
            draw_step_view(app);
        ImGui::EndChild();
        if (training) ImGui::SameLine();
    }
    if (training) {
        ImGui::BeginChild("training", ImVec2(0, -status_h), true);
        ImGui::TextUnformatted("Training panel");
        const char* where = app.training.full_window ? "beside the step (F7)" : "full window (F7)";
        const ImGuiStyle& style = ImGui::GetStyle();
        const float buttons = ImGui::CalcTextSize(where).x + ImGui::CalcTextSize("close").x + 4 * style.FramePadding.x +
                              2 * style.ItemSpacing.x;
        ImGui::SameLine(std::max(ImGui::GetCursorPosX(), ImGui::GetWindowContentRegionMax().x - buttons));
        if (ImGui::SmallButton(where)) app.training.full_window = !app.training.full_window;
        ImGui::SameLine();
        if (ImGui::SmallButton("close")) app.training.open = false;
        draw_training_panel(app.training, app.course, app.status, app.looks);
        ImGui::EndChild();
    }
    if (!app.looks.presentation) ImGui::TextDisabled("%s", app.status.c_str());
    draw_reset_confirmation(app);
    ImGui::End();
}

// A folder of its own under the temporary directory, removed with everything in it.
struct ScratchFolder {
    std::filesystem::path path;
    ScratchFolder() {
        std::string name = (std::filesystem::temp_directory_path() / "fp8lab-tour-XXXXXX").string();
        if (!mkdtemp(name.data())) throw std::runtime_error("cannot create a scratch folder for the tour's settings");
        path = name;
    }
    ~ScratchFolder() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    ScratchFolder(const ScratchFolder&) = delete;
    ScratchFolder& operator=(const ScratchFolder&) = delete;
};

// The lab and step that "LAB" or "LAB/STEP" names; empty, with the reason, when none.
struct StartPoint {
    int lab = 0, step = 0;
};
std::optional<StartPoint> find_start(const labs::Catalog& catalog, const std::string& want, std::string& problem) {
    const std::size_t slash = want.find('/');
    const std::string lab_id = want.substr(0, slash),
                      step_id = slash == std::string::npos ? "" : want.substr(slash + 1);
    for (std::size_t l = 0; l < catalog.labs.size(); ++l) {
        if (catalog.labs[l].id != lab_id) continue;
        const auto& steps = catalog.labs[l].steps;
        for (std::size_t s = 0; s < steps.size(); ++s)
            if (steps[s].logic.id == step_id) return StartPoint{int(l), int(s)};
        if (step_id.empty()) return StartPoint{int(l), 0};
        problem = "lab " + emu::quoted_input(lab_id) + " has no step " + emu::quoted_input(step_id) + "";
        return std::nullopt;
    }
    problem = "no lab " + emu::quoted_input(lab_id) + " (fp8lab labs lists them)";
    return std::nullopt;
}

// Where to start: --start (checked before), else where the user left off, else the first step.
void choose_start(AppState& app, const std::string& start) {
    std::string ignored;
    const std::optional<StartPoint> p =
        find_start(app.course.catalog, start.empty() ? app.settings.lab + "/" + app.settings.step : start, ignored);
    if (p)
        app.go_to(p->lab, p->step);
    else
        app.go_to(0, 0);
}

// Opens the nearest valid state to a link and says on the status line what was ignored.
void open_link(AppState& app, const std::string& link) {
    labs::OpenedLink opened = labs::open_step_link(app.course.catalog, link);
    if (opened.backend == labs::Backend::Gpu && !app.course.gpu.ready) {
        opened.ignored.push_back("backend gpu: " + app.course.gpu.reason + "; the CPU emulator runs it");
        opened.backend = labs::Backend::Cpu;
    }
    const int lab = int(opened.lab - app.course.catalog.labs.data());
    const int step = int(opened.step - opened.lab->steps.data());
    app.go_to(lab, step);
    StepState& state = app.course.current_state();
    state.parameters = std::move(opened.parameters);
    state.backend = opened.backend;
    state.needs_run = true;
    std::string ignored;
    for (const std::string& i : opened.ignored) ignored += (ignored.empty() ? "" : "; ") + i;
    app.status = ignored.empty() ? "Opened " + link : "Opened the link; ignored: " + ignored;
    if (!ignored.empty()) std::fprintf(stderr, "fp8lab gui: --open: ignored: %s\n", ignored.c_str());
}

}  // namespace

int run_gui(const GuiOptions& options) {
    AppState app;
    app.course.catalog = labs::load_curriculum();
    for (const labs::TextError& e : app.course.catalog.errors)
        std::fprintf(stderr, "fp8lab gui: %s\n", e.describe().c_str());
    if (app.course.catalog.labs.empty()) throw std::runtime_error("no lab could be loaded (see the errors above)");
    if (options.tour && !app.course.catalog.errors.empty()) throw std::runtime_error("the lab texts have errors");

    // Bad options are refused before any file is read or written.
    if (!options.theme.empty() && !parse_enum<Theme>(options.theme))
        throw options::UsageError("--theme: " + emu::quoted_input(options.theme) + " is not " + enum_choices<Theme>());
    if (std::string problem; !options.start.empty() && !find_start(app.course.catalog, options.start, problem))
        throw options::UsageError("--start: " + problem);
    // A tour never touches the user's own settings unless told to: it gets a scratch file.
    std::optional<ScratchFolder> scratch;
    if (options.tour && options.settings_path.empty()) scratch.emplace();
    app.settings_path = scratch                         ? (scratch->path / "settings.ini").string()
                        : options.settings_path.empty() ? default_settings_path()
                                                        : options.settings_path;
    LoadedSettings loaded = load_settings(app.settings_path);
    app.settings = loaded.settings;
    if (!loaded.problem.empty()) {
        std::fprintf(stderr, "fp8lab gui: %s\n", loaded.problem.c_str());
        app.status = loaded.problem;
        if (loaded.writable)
            app.save_settings_now();  // the corrupt file is kept aside: start afresh
        else
            app.settings_path.clear();  // keep the file we could not back up
    }
    const std::string theme = options.theme.empty() ? app.settings.theme : options.theme;
    app.looks.theme = parse_enum_or_throw<Theme>(theme, "theme");
    app.looks.presentation = options.presentation;
    app.instructor = options.instructor;
    app.training.open = options.training;
    app.training.full_window = options.training && options.presentation;
    app.inspector_open = options.inspector;
    // Looking for a GPU opens the CUDA libraries (about 0.4 s where they are installed):
    // the window opens meanwhile, except in a tour, whose screenshots show the result.
    std::future<gpu::ProbeResult> probing = std::async(std::launch::async, [] {
        gpu::ProbeResult result = gpu::probe();
        Window::wake();
        return result;
    });
    app.course.gpu.reason = "looking for a GPU...";
    if (options.tour || !options.open.empty()) {  // the tour's screenshots show the result; a link may ask for the GPU
        app.course.gpu = probing.get();
        if (app.course.gpu.ready) app.training.backend = labs::Backend::Gpu;
    }
    choose_start(app, options.start);
    if (!options.open.empty()) open_link(app, options.open);

    // Without --size: the size the window had when it was last closed, else 1600x900; either
    // at most the screen's work area (the tour and screenshots give --size: exactly that).
    const bool remembered = !options.size_given && app.settings.window_width > 0 && app.settings.window_height > 0;
    Window window(remembered ? app.settings.window_width : options.width,
                  remembered ? app.settings.window_height : options.height, "fp8lab", !options.size_given);
    std::optional<Tour> tour;
    if (options.tour) {
        tour.emplace(app, options.screenshots, options.quick_runs, options.tour_frames);
        window.set_vsync(false);  // frame times measure our work, not the display's refresh
    }
    double startup_ms = 0;
    bool first = true;
    // Frames drawn after the last change before the window sleeps or a screenshot is taken:
    // ImGui fits a new table's columns to their contents and shows its scroll bars from the
    // previous frame's sizes, so a table wider than its pane gets its sideways bar a few
    // frames after it first appears (4 was the least that showed it in presentation mode at
    // 1280x720; with 3 the screenshot had a blank strip where the bar belongs).
    constexpr int kSettleFrames = 5;
    int settle_frames = kSettleFrames;
    while (!window.should_close() && !(tour && tour->finished())) {
        if (window.content_scale() != app.looks.monitor_scale) {
            app.looks.monitor_scale = window.content_scale();
            app.looks.rebuild_fonts = true;
        }
        if (app.looks.rebuild_fonts) {
            app.looks.scale = app.settings.scale * app.looks.monitor_scale * (app.looks.presentation ? 1.5f : 1.0f);
            app.looks.fonts = build_fonts(app.looks.scale);
            app.looks.colours = apply_theme(app.looks.theme, app.looks.scale);
            set_plot_looks(app.looks.colours.plot, app.looks.fonts.bold);
            app.looks.rebuild_fonts = false;
        }
        if (probing.valid() && probing.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
            app.course.gpu = probing.get();
            if (app.course.gpu.ready && app.training.runs.empty()) app.training.backend = labs::Backend::Gpu;
        }
        if (tour) tour->before_frame(app);
        const auto frame_start = Clock::now();
        // Idle, the loop sleeps until an event: a few frames after each let ImGui settle
        // (a click shows its effect a frame later); a running step wakes it 30 times a second,
        // in the tour too: a loop drawing flat out (no vsync under Xvfb, a software renderer)
        // took the cores from the run it waits for, five times its time on 2 cores.
        // The step runs where it is drawn: not under the bit inspector, nor under the
        // training panel at full window (a screenshot there would wait for it forever).
        const bool step_shown = !app.inspector_open && !(app.training.open && app.training.full_window);
        const bool running =
            app.training.runner.running() ||
            (step_shown && (app.course.current_state().runner.running() || app.course.current_state().needs_run));
        if (running || app.looks.rebuild_fonts) settle_frames = kSettleFrames;
        const bool tooltip_due = take_plot_tooltip_pending();  // a resting pointer's tooltip needs a frame
        const Window::Wait wait = running || tooltip_due ? Window::Wait::Briefly
                                  : tour                 ? Window::Wait::None
                                  : settle_frames > 0    ? Window::Wait::None
                                                         : Window::Wait::UntilEvent;
        if (wait == Window::Wait::UntilEvent) settle_frames = kSettleFrames;
        --settle_frames;
        window.begin_frame(wait);
        const auto work_start = wait == Window::Wait::None ? frame_start : Clock::now();
        handle_keys(app);
        set_plot_tooltips(!app.looks.presentation || app.looks.projector_tooltips);
        draw_frame(app);
        const ImVec4 bg = app.looks.blank ? ImVec4(0, 0, 0, 1) : ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
        window.render(bg.x, bg.y, bg.z);
        if (tour) tour->after_frame(app, window, ms_since(work_start));
        if (!options.screenshot.empty() && !running && settle_frames <= 0) {
            int w = 0, h = 0;
            const std::vector<std::uint8_t> pixels = window.read_pixels(w, h);
            write_png(options.screenshot, pixels, w, h);
            std::fprintf(stderr, "fp8lab gui: saved %s (%dx%d)\n", options.screenshot.c_str(), w, h);
            break;
        }
        window.present();
        if (first) {
            startup_ms = std::chrono::duration<double, std::milli>(Clock::now() - options.started).count();
            first = false;
        }
    }
    if (!options.size_given && !tour) {  // remembered for the next session
        int w = 0, h = 0;
        window.size(w, h);
        if (w >= 640 && h >= 400) app.settings.window_width = w, app.settings.window_height = h;
    }
    app.save_settings_now();
    return tour ? tour->report(startup_ms) : 0;
}

}  // namespace fp8lab::gui
