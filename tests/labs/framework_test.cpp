// SPDX-License-Identifier: Apache-2.0
// The lab framework: text parsing and its file:line errors, placeholders, parameters, exercises.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "labs/logic/curriculum.hpp"
#include "labs/framework/training_mapping.hpp"
#include "labs/framework/placeholders.hpp"
#include "tests/labs/figure_features.hpp"
#include "tests/labs/light_step_runs.hpp"

using namespace fp8lab::labs;

namespace {

LabLogic two_step_logic() {
    StepLogic a;
    a.id = "first";
    a.run = [](const Parameters&, RunContext&) { return StepOutput{}; };
    StepLogic b = a;
    b.id = "second";
    return {"demo", {a, b}};
}

const char* kGoodText =
    "---\nid: demo\ntitle: Demo\n---\nIntro.\n\n## First step {#first}\nE4M3 max is {{E4M3.max}}.\n"
    "\n## Second step {#second}\n```\n## not a step\n```\nText.\n";

bool has_error(const Catalog& c, const std::string& file_line, const std::string& words) {
    return std::any_of(c.errors.begin(), c.errors.end(), [&](const TextError& e) {
        const std::string d = e.describe();
        return d.find(file_line) == 0 && d.find(words) != std::string::npos;
    });
}

// The clauses of a step's text that rank a run in which its own output's paired comparison
// finds no difference (docs/numerics.md, "How fp8lab compares two runs"): a clause naming the run (a distinctive word of its row: "delayed", "mxfp8")
// beside words that rank ("beats", "ends lower", "is worse"...).
std::vector<std::string> rankings_without_difference(const std::string& text, const StepOutput& out) {
    const auto lower = [](std::string s) {
        for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
        return s;
    };
    std::vector<std::string> names;
    for (const Table& t : out.tables)
        for (const auto& row : t.rows) {
            const bool within = std::any_of(row.begin(), row.end(), [](const Cell& c) {
                const auto* s = std::get_if<std::string>(&c);
                return s && s->starts_with("no difference found");
            });
            const auto* name = row.empty() ? nullptr : std::get_if<std::string>(&row[0]);
            if (!within || !name) continue;
            std::string word;
            for (char c : lower(*name) + " ") {
                if (std::isalnum(static_cast<unsigned char>(c))) {
                    word += c;
                    continue;
                }
                const bool generic = word.size() < 4 || std::all_of(word.begin(), word.end(), ::isdigit) ||
                                     word == "tensor" || word == "blocks" || word == "bf16";
                if (!word.empty() && !generic) names.push_back(word);
                word.clear();
            }
        }
    std::vector<std::string> found;
    if (names.empty()) return found;
    // Words that rank runs by their outcome (not "fits better", which explains a mechanism).
    const char* ranking[] = {"beats",      "outperform",  "wins",        "ahead of",   "ends lower",    "ends higher",
                             "lower loss", "higher loss", "better loss", "worse loss", "trains better", "trains worse",
                             "is better",  "is worse",    "does better", "does worse", "the best",      "the worst"};
    // Clauses, rather: a list item or a clause after a colon or semicolon stands alone.
    std::string sentence;
    for (char c : lower(text) + ".") {
        if (c != '.' && c != ';' && c != ':' && !(c == '-' && sentence.ends_with("\n"))) {
            sentence += c;
            continue;
        }
        const bool names_one = std::any_of(names.begin(), names.end(),
                                           [&](const std::string& n) { return sentence.find(n) != std::string::npos; });
        const bool ranks = std::any_of(std::begin(ranking), std::end(ranking),
                                       [&](const char* r) { return sentence.find(r) != std::string::npos; });
        if (names_one && ranks) found.push_back(sentence);
        sentence.clear();
    }
    return found;
}

// Places whose number is the answer's for another reason, or where a reading exercise's
// answer is to be found: (step, where, as places_stating names it, or "text: " and the
// start of a line of the step's text).
const std::vector<std::pair<std::string, std::string>> kSameNumberElsewhere = {
    {"block-scaling/e8m0-traps", "metric scale code of the all-zero block"},  // the other blocks' zeros
    {"block-scaling/e8m0-traps", "metric largest all-zero block element read back"},
    {"block-scaling/e8m0-traps", "table blocks, column amax"},
    {"block-scaling/e8m0-traps", "table e8m0-codes, column scale asked for"},
    {"block-scaling/e8m0-traps", "text: - **No zero.**"},  // the all-zero block's amax
    {"block-scaling/e8m0-traps", "text:   has no scale that fits it"},
    {"delayed-scaling/history", "table settings, column history"},                    // the history is 16 too
    {"delayed-scaling/trace-replay", "table per-tensor, column first past at step"},  // a step number
    {"training/crossover", "table sweep, column tokens"},                             // read from the recording
    {"rounding/modes", "title of figure staircases"},                                 // [1, 2)
    {"rounding/saturation", "table near-max, column x"},                              // E4M3's max as an input
    {"rounding/saturation", "table near-max, column not saturating"},
    {"rounding/saturation", "metric the midpoint rounds to"},        // E4M3's max, the step's subject
    {"rounding/stochastic", "table final-values, column rounding"},  // "seed 1"
    {"rounding/stochastic", "title of figure running-sum"},
    {"values/number-line", "table binades, column binade"},  // [8, 16)
    {"values/number-line", "table binades, column gap between neighbours"},
    {"why-scale/against-the-grid", "table census"},  // counts of zero
    {"why-scale/against-the-grid", "title of figure magnitudes"},
    {"why-scale/scale-or-scale-inv", "title of table conventions"},  // the amax the prompt gives
    {"why-scale/scale-or-scale-inv", "note: Hidden until"},          // the same title
    {"training/loss-curves", "note: Experiment: 64-"},               // the model's width
};

// Whether kSameNumberElsewhere names this place of this step.
bool same_number_elsewhere(const std::string& step, const std::string& place) {
    return std::any_of(kSameNumberElsewhere.begin(), kSameNumberElsewhere.end(),
                       [&](const auto& e) { return e.first == step && place.starts_with(e.second); });
}

// Whether `text` holds one of `forms` as a whole number token: not inside a longer number
// or name, and not the base or exponent of a power (2^0).
bool states_number(const std::string& text, const std::vector<std::string>& forms) {
    for (const std::string& form : forms) {
        for (std::size_t at = text.find(form); at != std::string::npos; at = text.find(form, at + 1)) {
            const auto number_char = [](char c) { return std::isalnum((unsigned char)c) || c == '.' || c == '^'; };
            const bool starts = at == 0 || !(number_char(text[at - 1]) || text[at - 1] == '-');
            const std::size_t end = at + form.size();
            // A full stop right after it ends a sentence, not the number.
            const bool ends =
                end == text.size() || !number_char(text[end]) ||
                (text[end] == '.' && (end + 1 == text.size() || !std::isdigit((unsigned char)text[end + 1])));
            if (starts && ends) return true;
        }
    }
    return false;
}

// Whether a word of `text` (between spaces and , ; : ( ) ?) is a number equal to `value`
// within the tolerance: "1.0" gives 1.
bool gives_number(const std::string& text, double value, double tolerance) {
    std::string word;
    for (const char c : text + " ") {
        if (!std::isspace((unsigned char)c) && std::string_view(",;:()?").find(c) == std::string_view::npos) {
            word += c;
            continue;
        }
        while (!word.empty() && word.back() == '.') word.pop_back();  // a sentence's full stop
        double number = 0;
        if (!word.empty() && parse_answer_number(word, number) &&
            std::abs(number - value) <= tolerance * std::max(1.0, std::abs(value)))
            return true;
        word.clear();
    }
    return false;
}

// The forms in which the program writes the number `answer`, and the revealed answer.
std::vector<std::string> answer_forms(double answer, const std::string& answer_text) {
    return {number_text(answer), shortest_text(answer), answer_text};
}

// Where a visible output states the number `answer`: a metric within the exercise's
// tolerance, or a cell, note, label or title holding it as a whole number token, in the
// forms the program writes numbers (number_text, shortest_text) and the revealed answer.
std::vector<std::string> places_stating(const StepOutput& out, double answer, double tolerance,
                                        const std::string& answer_text) {
    const std::vector<std::string> forms = answer_forms(answer, answer_text);
    const auto states = [&](const std::string& text) { return states_number(text, forms); };
    std::vector<std::string> places;
    for (const Metric& m : out.metrics)
        if (std::abs(m.value - answer) <= tolerance * std::max(1.0, std::abs(answer)) || states(number_text(m.value)))
            places.push_back("metric " + m.name);
    for (const Table& t : out.tables) {
        if (states(t.title)) places.push_back("title of table " + t.id);
        for (const auto& row : t.rows)
            for (std::size_t c = 0; c < row.size(); ++c)
                if (states(cell_text(t.columns[c], row[c])))
                    places.push_back("table " + t.id + ", column " + t.columns[c].name);
    }
    for (const Figure& f : out.figures) {
        if (states(f.title)) places.push_back("title of figure " + f.id);
        for (const Axis* axis : {&f.x_axis, &f.y_axis})
            for (const std::string& category : axis->categories)
                if (states(category)) places.push_back("category of figure " + f.id + ": " + category);
        for (const Annotation& a : f.annotations)
            if (states(a.text)) places.push_back("label on figure " + f.id + ": " + a.text);
    }
    for (const std::string& note : out.notes)
        if (states(note)) places.push_back("note: " + note);
    return places;
}

// Lower case, every run of white space one space: how a sentence is compared with output.
std::string folded(const std::string& text) {
    std::string out;
    for (const char c : text) {
        if (std::isspace((unsigned char)c)) {
            if (!out.empty() && out.back() != ' ') out += ' ';
        } else {
            out += char(std::tolower((unsigned char)c));
        }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

// Where a visible output quotes the right choice of a choice exercise: its whole text, or
// its first clause (up to a colon, semicolon or comma) when that is three words or more.
// A choice of one or two words ("NaN", "E5M2") is a name the output may use for other
// things: only a cell, note or label that is nothing but it counts.
std::vector<std::string> places_quoting(const StepOutput& out, const std::string& choice_text) {
    const std::string whole = folded(choice_text);
    const bool short_choice = std::count(whole.begin(), whole.end(), ' ') < 2;
    std::vector<std::string> quotes = {whole};
    const std::size_t cut = whole.find_first_of(":;,");
    if (cut != std::string::npos) {
        const std::string clause = whole.substr(0, cut);
        if (std::count(clause.begin(), clause.end(), ' ') >= 2) quotes.push_back(clause);
    }
    const auto quotes_it = [&](const std::string& text) {
        const std::string f = folded(text);
        if (short_choice) return f == whole;
        return std::any_of(quotes.begin(), quotes.end(), [&](const std::string& q) { return f.find(q) != f.npos; });
    };
    std::vector<std::string> places;
    for (const Metric& m : out.metrics)
        if (quotes_it(m.name)) places.push_back("metric " + m.name);
    for (const Table& t : out.tables) {
        if (quotes_it(t.title)) places.push_back("title of table " + t.id);
        for (const auto& row : t.rows)
            for (std::size_t c = 0; c < row.size(); ++c)
                if (quotes_it(cell_text(t.columns[c], row[c])))
                    places.push_back("table " + t.id + ", column " + t.columns[c].name);
    }
    for (const Figure& f : out.figures) {
        if (quotes_it(f.title)) places.push_back("title of figure " + f.id);
        for (const Annotation& a : f.annotations)
            if (quotes_it(a.text)) places.push_back("label on figure " + f.id + ": " + a.text);
    }
    for (const std::string& note : out.notes)
        if (quotes_it(note)) places.push_back("note: " + note);
    return places;
}

}  // namespace

TEST_CASE("a well-formed lab loads with its steps in order, headings in code fences are text") {
    const Catalog c = build_catalog({{"demo.md", kGoodText}}, {two_step_logic()});
    REQUIRE(c.errors.empty());
    REQUIRE(c.labs.size() == 1);
    const Lab& lab = c.labs[0];
    CHECK(lab.title == "Demo");
    REQUIRE(lab.steps.size() == 2);
    CHECK(lab.steps[0].title == "First step");
    CHECK(lab.steps[0].text_line == 7);
    CHECK(render_placeholders(lab.steps[0].markdown) == "E4M3 max is 448.\n");
    CHECK(lab.steps[1].markdown.find("## not a step") != std::string::npos);
    // ~~~ fences are fences, and a fence closes only with its own character, at least as long.
    const char* tildes =
        "---\nid: demo\ntitle: Demo\n---\n\n## First step {#first}\n~~~~\n## not a step\n```\n"
        "## still code\n~~~\n## still code\n~~~~\n\n## Second step {#second}\nText.\n";
    const Catalog t = build_catalog({{"demo.md", tildes}}, {two_step_logic()});
    REQUIRE(t.errors.empty());
    REQUIRE(t.labs.at(0).steps.size() == 2);
    CHECK(t.labs[0].steps[0].markdown.find("## still code") != std::string::npos);
    const Catalog open = build_catalog({{"demo.md", "---\nid: demo\ntitle: Demo\n---\n## First step {#first}\n~~~\n"}},
                                       {two_step_logic()});
    CHECK(has_error(open, "demo.md:6", "a ~~~ code fence is not closed"));
}

TEST_CASE("a folder or a FIFO named *.md is reported and skipped, never opened") {
    char name[] = "/tmp/fp8lab-content-XXXXXX";
    const std::string dir = mkdtemp(name);
    std::filesystem::create_directory(dir + "/folder.md");
    REQUIRE(mkfifo((dir + "/fifo.md").c_str(), 0600) == 0);
    const Catalog c = load_curriculum(dir);  // a FIFO opened for reading would block here
    CHECK(has_error(c, dir + "/fifo.md", "not a regular file; skipped"));
    CHECK(has_error(c, dir + "/folder.md", "not a regular file; skipped"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("filling placeholders examines each byte of the text a bounded number of times") {
    // 80,000 placeholders once took 13 s: each rescanned the text for its line number; a line
    // of 400,000 unclosed "{{" was rescanned to its end for each. Counted, not timed: a
    // wall-clock ratio fails on a busy machine.
    for (const int count : {10000, 80000}) {
        std::string text;
        for (int i = 0; i < count; ++i) text += "x {{E4M3.max}} {{BF16.nan_codes}}\n";
        text += "{{ never closed\n";
        std::size_t examined = 0;
        const auto errors = placeholder_errors(text, {}, &examined);
        REQUIRE(errors.size() == 1);
        CHECK(errors.at(0).line == count + 1);
        CHECK(examined <= 4 * text.size());
    }
    std::string one_line = "text\n";
    for (int i = 0; i < 400000; ++i) one_line += "{{";
    std::size_t examined = 0;
    CHECK(placeholder_errors(one_line + "\n", {}, &examined).size() == 1);
    CHECK(examined <= 4 * one_line.size());
}

TEST_CASE("placeholder errors: the first of each line, and at most fifty lines") {
    std::string one_line;
    for (int i = 0; i < 400000; ++i) one_line += "{{";
    const auto single = placeholder_errors("text\n" + one_line + "\n");
    REQUIRE(single.size() == 1);
    CHECK(single[0].line == 2);
    std::string many;
    for (int i = 0; i < 200; ++i) many += "{{nope" + std::to_string(i) + "}} {{ unclosed\n";
    const auto capped = placeholder_errors(many);
    REQUIRE(capped.size() == 51);
    CHECK(capped[49].line == 50);
    CHECK(std::string(capped[50].what()).find("on 150 more line(s)") != std::string::npos);
}

TEST_CASE("validation errors name the file and the line") {
    SUBCASE("a step in the text without logic") {
        const std::string text = std::string(kGoodText) + "\n## Third {#third}\nMore.\n";
        const Catalog c = build_catalog({{"demo.md", text}}, {two_step_logic()});
        CHECK(has_error(c, "demo.md:16:", "step 'third' is in the text but lab 'demo' has no logic"));
        CHECK(c.labs.empty());
    }
    SUBCASE("logic without text") {
        const Catalog c =
            build_catalog({{"demo.md", "---\nid: demo\ntitle: Demo\n---\n## First {#first}\nx\n"}}, {two_step_logic()});
        CHECK(has_error(c, "demo.md:2:", "step 'second' of lab 'demo' has logic but no text"));
    }
    SUBCASE("an unknown placeholder") {
        const Catalog c = build_catalog(
            {{"demo.md",
              "---\nid: demo\ntitle: Demo\n---\n## First {#first}\nok\n{{E4M3.maxx}}\n## Second {#second}\n"}},
            {two_step_logic()});
        CHECK(has_error(c, "demo.md:7:", "unknown property 'maxx'"));
    }
    SUBCASE("an unknown placeholder in the introduction") {
        const Catalog c = build_catalog(
            {{"demo.md",
              "---\nid: demo\ntitle: Demo\n---\n\nIntro line.\n{{FP8.max}}\n## First {#first}\n## Second {#second}\n"}},
            {two_step_logic()});
        CHECK(has_error(c, "demo.md:7:", "unknown format 'FP8'"));
    }
    SUBCASE("a heading without an id, and no front matter") {
        const Catalog c = build_catalog(
            {{"a.md", "---\nid: demo\ntitle: Demo\n---\n## First\n"}, {"b.md", "# Hello\n"}}, {two_step_logic()});
        CHECK(has_error(c, "a.md:5:", "needs its id"));
        CHECK(has_error(c, "b.md:1:", "front matter"));
    }
    SUBCASE("a malformed file does not stop the others from loading") {
        LabLogic other = two_step_logic();
        other.id = "other";
        const std::string other_text = std::string(kGoodText).replace(std::string(kGoodText).find("demo"), 4, "other");
        const Catalog c =
            build_catalog({{"bad.md", "---\nid: demo\n"}, {"good.md", other_text}}, {two_step_logic(), other});
        CHECK(has_error(c, "bad.md:1:", "not closed"));
        REQUIRE(c.labs.size() == 1);
        CHECK(c.labs[0].id == "other");
    }
}

TEST_CASE("placeholders come from the emulator; unknown ones are errors with their line") {
    CHECK(placeholder_value("E4M3.max") == "448");
    CHECK(placeholder_value("e5m2.max") == "57344");
    CHECK(placeholder_value("E4M3.min_subnormal") == "0.001953125");
    CHECK(placeholder_value("E4M3.min_subnormal:pow2") == "2^-9");
    CHECK(placeholder_value("E4M3-IEEE.max") == "240");
    CHECK(placeholder_value("E4M3.nan_codes") == "2");
    CHECK(placeholder_value("E5M2.nan_codes") == "6");
    CHECK(placeholder_value("E5M2.inf_codes") == "2");
    CHECK(placeholder_value("E2M1.finite_values") == "15");
    CHECK(placeholder_value("FP32.nan_codes") == std::to_string(2 * ((1 << 23) - 1)));
    CHECK_THROWS_WITH_AS(placeholder_value("E9M9.max"), doctest::Contains("unknown format 'E9M9'"), PlaceholderError);
    CHECK_THROWS_AS(placeholder_value("E4M3.max:pow2"), PlaceholderError);  // 448 is not a power of two
    try {
        render_placeholders("line one\nline {{E4M3.nope}} two\n");
        FAIL("expected an error");
    } catch (const PlaceholderError& e) {
        CHECK(e.line == 2);
    }
    CHECK_THROWS_AS(render_placeholders("{{E4M3.max\n}}"), PlaceholderError);
}

TEST_CASE("parameters refuse bad values naming the parameter and what it accepts") {
    Parameters p({choice("format", {"e4m3", "e5m2"}, "e4m3"), integer("code", 0, 255, 90),
                  real("lr", 1e-5, 1.0, 1e-3, true), toggle("on", false)});
    CHECK(p.choice("format") == "e4m3");
    p.set_text("code", "0x7e");
    CHECK(p.integer("code") == 126);
    p.set_text("code", "010");  // decimal, not C's octal
    CHECK(p.integer("code") == 10);
    p.set_text("on", "true");
    CHECK(p.toggle("on"));
    CHECK_THROWS_WITH_AS(p.set_text("code", "256"),
                         doctest::Contains("'code': 256 is out of range; it accepts an integer from 0 to 255"),
                         ParameterError);
    CHECK_THROWS_WITH_AS(p.set_text("code", "1.5"), doctest::Contains("not an integer"), ParameterError);
    CHECK_THROWS_WITH_AS(p.set_text("format", "e4m4"), doctest::Contains("one of e4m3, e5m2"), ParameterError);
    CHECK_THROWS_WITH_AS(p.set_text("lr", "2"), doctest::Contains("a number from"), ParameterError);
    CHECK_THROWS_WITH_AS(p.set_text("on", "maybe"), doctest::Contains("true or false"), ParameterError);
    CHECK_THROWS_WITH_AS(p.set_text("size", "1"),
                         doctest::Contains("unknown parameter 'size'; this step has format, code, lr, on"),
                         ParameterError);
    CHECK_THROWS_AS(p.set("code", ParameterValue(std::string("x"))), ParameterError);
}

TEST_CASE("exercises recognise the mistake behind a wrong answer") {
    const Catalog c = load_curriculum();
    const Lab* formats = c.find("formats");
    REQUIRE(formats);
    const Exercise& max = *formats->find_step("ocp-vs-ieee")->exercise;
    CHECK(max.check("448").correct);
    CHECK(max.check(" 4.48e2 ").correct);
    CHECK(max.check("0x1.cp+8").correct);
    CHECK(max.check("896/2").correct);
    CHECK(max.check("1.75*2^8").hint.find("Type a number") != std::string::npos);
    CHECK(max.check("448/0").hint.find("Type a number") != std::string::npos);
    CHECK(max.check("448.0").correct);
    CHECK_FALSE(max.check("448.2").correct);  // to its four digits, 448.2 is not 448
    CHECK_FALSE(max.check("449").correct);
    CHECK(max.check("240").hint.find("IEEE-style") != std::string::npos);
    CHECK(max.check("480").hint.find("NaN") != std::string::npos);
    CHECK(max.check("inf").hint.find("no infinities") != std::string::npos);
    CHECK(max.check("banana").hint.find("Type a number") != std::string::npos);
    const Exercise& decode = *formats->find_step("bits-to-value")->exercise;
    CHECK(decode.check("20").correct);
    CHECK(decode.check("10").hint.find("bias one too large") != std::string::npos);
    CHECK(decode.check("40").hint.find("bias one too small") != std::string::npos);
    const Exercise& overflow = *formats->find_step("special-values")->exercise;
    CHECK(overflow.check("NaN").correct);
    CHECK(overflow.check("2").correct);
    CHECK(overflow.check("+Inf").hint.find("no infinities") != std::string::npos);
    const Lab* values = c.find("values");
    REQUIRE(values);
    const Exercise& gap = *values->find_step("error-by-magnitude")->exercise;
    CHECK(gap.check("2").correct);
    CHECK(gap.check("0.125").hint.find("fixed grid") != std::string::npos);
    const Exercise& point_three = *values->find_step("fixed-grid")->exercise;
    CHECK(point_three.check("0.3125").correct);
    CHECK(point_three.check("0.25").hint.find("fixed 1/8 grid") != std::string::npos);
    const Lab* rounding = c.find("rounding");
    REQUIRE(rounding);
    const Exercise& tie = *rounding->find_step("modes")->exercise;
    CHECK(tie.check("1").correct);
    CHECK(tie.check("1.125").hint.find("ties away") != std::string::npos);
    CHECK(tie.check("1.0625").hint.find("four mantissa bits") != std::string::npos);
    const Exercise& lost = *rounding->find_step("stochastic")->exercise;
    CHECK(lost.check("1").correct);
    CHECK(lost.check("2").hint.find("exact sum") != std::string::npos);
    CHECK(lost.check("1.0078125").hint.find("next BF16 value") != std::string::npos);
    const Exercise& clamp = *rounding->find_step("saturation")->exercise;
    CHECK(clamp.check("448").correct);
    CHECK(clamp.check("512").hint.find("no 512") != std::string::npos);
    CHECK(clamp.check("240").hint.find("IEEE-style") != std::string::npos);
    CHECK(clamp.check("NaN").hint.find("does not saturate") != std::string::npos);
    const Exercise& once = *rounding->find_step("double-rounding")->exercise;
    CHECK(once.check("1.125").correct);
    CHECK(once.check("1").hint.find("through float32") != std::string::npos);
    // Digits past a double's range are no answer to any exercise: never right, asked again.
    int numeric = 0;
    for (const Lab& lab : c.labs)
        for (const Step& step : lab.steps) {
            if (!step.exercise || step.exercise->type != AnswerType::Number) continue;
            ++numeric;
            for (const char* huge : {"1.00e999", "-1.00e999", "1e400", "1.2345e308000", "1e308/1e-300"}) {
                CAPTURE(step.logic.id);
                CAPTURE(huge);
                const Feedback f = step.exercise->check(huge);
                CHECK_FALSE(f.correct);
                CHECK(f.hint.find("Type a number") != std::string::npos);
            }
        }
    CHECK(numeric >= 11);
}

TEST_CASE("no exercise can be gamed: no listed mistake, NaN or infinity is judged right; the revealed answer is") {
    const Catalog c = load_curriculum();
    int numeric = 0, choices = 0;
    for (const Lab& lab : c.labs)
        for (const Step& step : lab.steps) {
            if (!step.exercise || !step.logic.exercise) continue;
            CAPTURE(lab.id + "/" + step.logic.id);
            const Exercise& e = *step.exercise;
            CHECK(e.check(e.answer_text).correct);
            if (e.type == AnswerType::Choice) {
                ++choices;
                // Any case, any spacing, or its number; no other choice is right.
                std::string upper;
                for (char ch : e.answer_text) upper += char(std::toupper(static_cast<unsigned char>(ch)));
                CHECK(e.check("  " + upper + " ").correct);
                for (std::size_t i = 0; i < e.choices.size(); ++i)
                    CHECK(e.check(e.choices[i]).correct == (e.choices[i] == e.answer_text));
                continue;
            }
            ++numeric;
            const ExerciseSpec& spec = *step.logic.exercise;
            for (const auto& mistake : spec.mistakes) {  // no structured binding: CAPTURE is a lambda
                CAPTURE(mistake.first);
                const Feedback f = e.check(shortest_text(mistake.second));
                CHECK_FALSE(f.correct);
                CHECK(!f.hint.empty());
            }
            if (std::isfinite(spec.answer))
                for (const char* not_finite : {"NaN", "nan", "inf", "-inf", "Infinity"}) {
                    CAPTURE(not_finite);
                    CHECK_FALSE(e.check(not_finite).correct);
                }
        }
    CHECK(numeric >= 20);
    CHECK(choices >= 5);
}

TEST_CASE("answers typed as students type them: decimal commas, thousands, the last digit's tie, NaN") {
    const auto value = [](const std::string& text) {
        double v = 0;
        REQUIRE_MESSAGE(parse_answer_number(text, v), text);
        return v;
    };
    CHECK(value("0,3125") == 0.3125);
    CHECK(value("1,5") == 1.5);
    CHECK(value("16,384") == 16384);
    CHECK(value("1,024,000") == 1024000);
    CHECK(value("1,024.5") == 1024.5);
    CHECK(value("0,312") == 0.312);
    CHECK(std::isnan(value("NaN")));
    CHECK(std::isinf(value("-Infinity")));
    double v = 0;
    CHECK_FALSE(parse_answer_number("1,2,3", v));
    // 0.3125 to three digits is 0.312 or 0.313 (a tie at the last digit): both are right.
    for (const char* typed : {"0.312", "0.313", "0,313", "0.3125"}) {
        CAPTURE(typed);
        const auto t = parse_typed_number(typed);
        REQUIRE(t);
        CHECK(matches(*t, 0.3125, 1e-9));
    }
    CHECK_FALSE(matches(*parse_typed_number("0.314"), 0.3125, 1e-9));
    CHECK_FALSE(matches(*parse_typed_number("0.311"), 0.3125, 1e-9));
    CHECK(matches(*parse_typed_number("nan"), NAN, 0));
    CHECK_FALSE(matches(*parse_typed_number("nan"), 448, 1e-9));
}

namespace {

// The demo lab with an exercise on its first step: 448 (E4M3's max), a recognised mistake
// "ieee" (464), and the width the code computed for {{width}}.
LabLogic exercise_logic() {
    LabLogic l = two_step_logic();
    l.steps[0].exercise = numeric_exercise(448, {{"ieee", 464}});
    l.steps[0].exercise->values = {{"width", "4096"}};
    return l;
}

std::string exercise_text(const std::string& block) {
    return "---\nid: demo\ntitle: Demo\n---\n## First step {#first}\nText.\n\n" + block +
           "\nAfter.\n## Second step {#second}\nText.\n";
}

const char* kExerciseBlock =
    "~~~exercise\n"
    "prompt: The largest E4M3 value,\n"
    "  at width {{width}}?\n"
    "otherwise: It is {{E4M3.max}}.\n"
    "mistake ieee: That is the IEEE-style layout's.\n"
    "~~~\n";

}  // namespace

TEST_CASE("an exercise's words come from the lab text: prompt, hints, values, placeholders") {
    const Catalog c = build_catalog({{"demo.md", exercise_text(kExerciseBlock)}}, {exercise_logic()});
    REQUIRE(c.errors.empty());
    const Step& step = c.labs.at(0).steps.at(0);
    REQUIRE(step.exercise);
    CHECK(step.exercise->prompt == "The largest E4M3 value, at width 4096?");
    CHECK(step.exercise->check("448").correct);
    CHECK(step.exercise->check("464").hint == "That is the IEEE-style layout's.");
    CHECK(step.exercise->check("3").hint == "It is 448.");
    // An exponent past what an int holds is no way around the answer: read whole, it makes
    // the number 0, not a number with half a unit wider than any answer.
    for (const char* wrapped : {"1.00e-4294966996", "1.00e-18446744073709551316", "4.48e-9999999999999999999"})
        CHECK_FALSE(step.exercise->check(wrapped).correct);
    // The block is the exercise's, not text to show.
    CHECK(step.markdown.find("~~~") == std::string::npos);
    CHECK(step.markdown.find("After.") != std::string::npos);
    CHECK(!c.labs[0].steps[1].exercise);
}

TEST_CASE("an exercise's words and its code must agree, errors at the file's line") {
    const auto errors_of = [](const std::string& block, const LabLogic& logic) {
        return build_catalog({{"demo.md", exercise_text(block)}}, {logic});
    };
    // Block at line 8, its sentences from line 9.
    const Catalog unknown =
        errors_of("~~~exercise\nprompt: P\notherwise: O\nmistake ieee: I\nmistake bias: B\n~~~\n", exercise_logic());
    CHECK(has_error(unknown, "demo.md:12:", "no 'mistake bias' in the code"));
    const Catalog missing = errors_of("~~~exercise\nprompt: P\nmistake ieee: I\n~~~\n", exercise_logic());
    CHECK(has_error(missing, "demo.md:8:", "needs its 'otherwise' sentence"));
    const Catalog value =
        errors_of("~~~exercise\nprompt: P {{depth}}\notherwise: O\nmistake ieee: I\n~~~\n", exercise_logic());
    CHECK(has_error(value, "demo.md:9:", "{{depth}}"));
    const Catalog placeholder =
        errors_of("~~~exercise\nprompt: P\notherwise: {{E4M3.nope}}\nmistake ieee: I\n~~~\n", exercise_logic());
    CHECK(has_error(placeholder, "demo.md:10:", "nope"));
    const Catalog twice =
        errors_of("~~~exercise\nprompt: P\nprompt: Q\notherwise: O\nmistake ieee: I\n~~~\n", exercise_logic());
    CHECK(has_error(twice, "demo.md:10:", "twice"));
    const Catalog unclosed = errors_of("~~~exercise\nprompt: P\n", exercise_logic());
    CHECK(has_error(unclosed, "demo.md:8:", "not closed"));
    const Catalog no_key = errors_of("~~~exercise\njust words\n~~~\n", exercise_logic());
    CHECK(has_error(no_key, "demo.md:9:", "key: sentence"));
    // A block with no exercise in the code, and an exercise in the code with no block.
    CHECK(has_error(errors_of(kExerciseBlock, two_step_logic()), "demo.md:8:", "no exercise in the code"));
    CHECK(has_error(errors_of("", exercise_logic()), "demo.md:5:", "no ~~~exercise block"));
    // A choice exercise: every choice, and a hint for every wrong one.
    LabLogic choice = two_step_logic();
    choice.steps[0].exercise = choice_exercise({"a", "b"}, 0);
    const Catalog hint = errors_of("~~~exercise\nprompt: P\nchoice a: A\nchoice b: B\n~~~\n", choice);
    CHECK(has_error(hint, "demo.md:8:", "needs its 'hint b' sentence"));
    const Catalog good = errors_of("~~~exercise\nprompt: P\nchoice a: A\nchoice b: B\nhint b: Not B.\n~~~\n", choice);
    REQUIRE(good.errors.empty());
    CHECK(good.labs[0].steps[0].exercise->check("2").hint == "Not B.");
    CHECK(good.labs[0].steps[0].exercise->check("A").correct);
}

TEST_CASE("parameters take their label and help from the lab text; a missing or unknown one is file:line") {
    LabLogic logic = two_step_logic();
    logic.steps[0].parameters = {integer("n", 1, 10, 3), toggle("on", false)};
    const auto catalog = [&](const std::string& block) {
        return build_catalog({{"demo.md", "---\nid: demo\ntitle: Demo\n---\n## First step {#first}\nText.\n\n" + block +
                                              "## Second step {#second}\nText.\n"}},
                             {logic});
    };
    const Catalog good = catalog(
        "~~~parameters\nlabel n: Steps\nhelp n: How many, up to\n  {{E4M3.bias}} and more\nlabel on: On\nhelp on: "
        "Switch\n~~~\n");
    REQUIRE(good.errors.empty());
    const ParameterSpec& n = good.labs[0].steps[0].logic.parameters[0];
    CHECK(n.label == "Steps");
    CHECK(n.help == "How many, up to 7 and more");
    CHECK(good.labs[0].steps[0].markdown == "Text.\n\n");
    // Block from line 8, sentences from line 9.
    CHECK(has_error(catalog("~~~parameters\nlabel n: Steps\nhelp n: H\nlabel on: On\n~~~\n"),
                    "demo.md:8:", "need their 'help on' sentence"));
    CHECK(has_error(catalog("~~~parameters\nlabel n: S\nhelp n: H\nlabel on: O\nhelp on: H\nlabel m: M\n~~~\n"),
                    "demo.md:13:", "no parameter for 'label m'; its parameters are: n, on"));
    CHECK(has_error(catalog(""), "demo.md:5:", "no ~~~parameters block"));
}

TEST_CASE("figure and table titles come from the lab text; the code gives their values and declares their keys") {
    LabLogic logic = two_step_logic();
    logic.steps[0].titles = {{"figure curve", {"format"}}, {"table numbers"}};
    bool undeclared = false;
    logic.steps[0].run = [&undeclared](const Parameters&, RunContext&) {
        StepOutput out;
        Figure f;
        f.id = undeclared ? "other" : "curve";
        f.title_values = {{"format", "E4M3 (OCP FP8)"}};
        out.figures.push_back(f);
        out.tables.push_back(Table{"numbers", {}, {}, {}});
        return out;
    };
    const auto catalog = [&](const std::string& block) {
        return build_catalog({{"demo.md", "---\nid: demo\ntitle: Demo\n---\n## First step {#first}\nText.\n\n" + block +
                                              "## Second step {#second}\nText.\n"}},
                             {logic});
    };
    const Catalog good = catalog(
        "~~~titles\nfigure curve: Every {{format}} value up to {{E4M3.max}}\ntable numbers: The numbers\n~~~\n");
    REQUIRE(good.errors.empty());
    const Step& step = good.labs[0].steps[0];
    CHECK(step.markdown == "Text.\n\n");
    RunContext context;
    const StepOutput out = step.run(Parameters(step.logic.parameters), context);
    REQUIRE(out.figures.size() == 1);
    CHECK(out.figures[0].title == "Every E4M3 (OCP FP8) value up to 448");
    CHECK(out.tables[0].title == "The numbers");
    // An output item whose title the step does not declare stops the run.
    undeclared = true;
    CHECK_THROWS_WITH_AS(step.run(Parameters(step.logic.parameters), context),
                         doctest::Contains("'figure other', which it does not declare"), std::logic_error);
    // Block from line 8, sentences from line 9.
    CHECK(has_error(catalog("~~~titles\nfigure curve: C {{format}}\n~~~\n"),
                    "demo.md:8:", "need their 'table numbers' sentence"));
    CHECK(has_error(catalog("~~~titles\nfigure curve: C\ntable numbers: N\ntable more: M\n~~~\n"),
                    "demo.md:11:", "no title 'table more'; its titles are: figure curve, table numbers"));
    CHECK(has_error(catalog("~~~titles\nfigure curve: C {{colour}}\ntable numbers: N\n~~~\n"),
                    "demo.md:9:", "{{colour}}"));
    CHECK(has_error(catalog(""), "demo.md:5:", "no ~~~titles block"));
}

TEST_CASE("every lab in labs/content loads, and every step runs with its defaults") {
    const Catalog c = load_curriculum();
    for (const TextError& e : c.errors) FAIL_CHECK(e.describe());
    CHECK(c.labs.size() == all_lab_logic().size());
    // Each figure feature of the catalog, with a step that has it; and those of the steps
    // that the sanitizer tree's catalog export runs (light_step_runs.hpp).
    std::map<std::string, std::string> catalog_features;
    std::set<std::string> exported_features;
    for (const Lab& lab : c.labs) {
        CHECK(!render_placeholders(lab.introduction).empty());
        for (const Step& s : lab.steps) {
            const std::string id = lab.id + "/" + s.logic.id;
            CAPTURE(id);
            CHECK(render_placeholders(s.markdown, s.logic.text_values).find("{{") == std::string::npos);
            RunContext context;
            Parameters parameters(s.logic.parameters);
            const std::optional<std::int64_t> light = fp8lab::test::light_steps(s);
            if (light) parameters.set("steps", *light);
            const StepOutput out = s.run(parameters, context);
            CHECK(out.figures.size() + out.tables.size() > 0);
            const std::set<std::string> features = fp8lab::test::figure_features(out);
            for (const std::string& f : features) catalog_features.emplace(f, id);
            if (fp8lab::test::exported_under_sanitizers(id, s))
                exported_features.insert(features.begin(), features.end());
            for (const Table& t : out.tables) CHECK(!t.title.empty());
            for (const Figure& f : out.figures) {
                CHECK(!f.id.empty());
                CHECK(!f.title.empty());
                for (const Series& series : f.series)
                    CHECK((series.kind == SeriesKind::VerticalLines || series.x.size() == series.y.size() ||
                           series.kind == SeriesKind::Heatmap || series.kind == SeriesKind::Histogram));
            }
            for (const Table& t : out.tables)
                for (const auto& row : t.rows) CHECK(row.size() == t.columns.size());
            // No sentence of the text ranks runs in which the step's own table finds no paired
            // difference (at the defaults the text describes).
            if (!light)
                for (const std::string& sentence :
                     rankings_without_difference(render_placeholders(s.markdown, s.logic.text_values), out))
                    FAIL_CHECK("the text ranks a run in which no difference was found: \"" << sentence << "\"");
            // What a student sees before answering never states a numeric answer; the parts
            // the step names as giving it away are hidden (and only those: an instructor, or
            // a student who has answered, sees the same output otherwise).
            // (At the step's defaults only: its answer is computed for them.)
            if (!light && s.exercise && s.logic.exercise && s.logic.exercise->type == AnswerType::Number) {
                const ExerciseSpec& spec = *s.logic.exercise;
                const StepOutput hidden = with_answer_hidden(out);
                for (const std::string& place :
                     places_stating(hidden, spec.answer, spec.tolerance, s.exercise->answer_text))
                    if (!same_number_elsewhere(id, place))
                        FAIL_CHECK(id << ": the answer " << s.exercise->answer_text
                                      << " is visible before answering: " << place);
                // Nor does the step's text state it, unless the prompt gives that number itself.
                const std::vector<std::string> forms = answer_forms(spec.answer, s.exercise->answer_text);
                if (!gives_number(s.exercise->prompt, spec.answer, spec.tolerance)) {
                    std::istringstream text(render_placeholders(s.markdown, s.logic.text_values));
                    for (std::string line; std::getline(text, line);)
                        if (states_number(line, forms) && !same_number_elsewhere(id, "text: " + line))
                            FAIL_CHECK(id << ": the text states the answer " << s.exercise->answer_text << ": \""
                                          << line << "\"");
                }
                CHECK(hidden.tables.size() + hidden.figures.size() > 0);
            }
            // Nor does it quote a choice exercise's right answer.
            if (!light && s.exercise && s.exercise->type == AnswerType::Choice)
                for (const std::string& place : places_quoting(with_answer_hidden(out), s.exercise->answer_text))
                    FAIL_CHECK(id << ": the right choice \"" << s.exercise->answer_text
                                  << "\" is quoted before answering: " << place);
        }
        // Every lab ends with at least one exercise.
        CHECK(std::any_of(lab.steps.begin(), lab.steps.end(), [](const Step& s) { return s.exercise.has_value(); }));
    }
    // The sanitizer tree exports a subset of the catalog; it must draw every feature.
    CHECK(catalog_features.size() > 20);
    for (const auto& [feature, step] : catalog_features)
        if (!exported_features.contains(feature))
            FAIL_CHECK("\"" << feature << "\" (in " << step
                            << ") is in no step that the sanitizer tree exports: add a step that has it to "
                               "kStepsParameterStepsExported (tests/labs/light_step_runs.hpp)");
    MESSAGE(catalog_features.size() << " figure features in the catalog");
}

TEST_CASE("a right choice quoted in a note, a cell or its first clause alone is found") {
    StepOutput out;
    out.notes.push_back("Why? Transformer  Engine refuses it, on any Hopper.");
    CHECK(places_quoting(out, "Transformer Engine refuses it: MXFP8 needs compute capability 10.0").size() == 1);
    CHECK(places_quoting(out, "It runs natively: Hopper's FP8 tensor cores take E8M0 scales").empty());
    Table t{"runs", "", {{"why"}}, {}};
    t.rows.push_back({std::string("E4M3 rounds more coarsely than E5M2")});
    out.tables.push_back(t);
    CHECK(places_quoting(out, "E4M3 rounds more coarsely than E5M2") ==
          std::vector<std::string>{"table runs, column why"});
    // A one-word choice only as a whole cell, not inside another name.
    out.notes = {"E5M2 gradients"};
    out.tables[0].rows.push_back({std::string("nan")});
    CHECK(places_quoting(out, "E5M2").empty());
    CHECK(places_quoting(out, "NaN") == std::vector<std::string>{"table runs, column why"});
}

TEST_CASE("a sentence ranking a run in which the table finds no difference is found") {
    StepOutput out;
    Table t{"runs", "", {{"run"}, {"against BF16"}}, {}};
    t.rows.push_back({std::string("MXFP8 (blocks of 32)"),
                      std::string("no difference found at 4 seeds (95% interval -0.8% to +1.1%)")});
    t.rows.push_back(
        {std::string("FP8, delayed (per tensor)"),
         std::string("FP8, delayed 1.2% worse than BF16 (95% interval +0.9% to +1.5%; worse on 4 of 4 seeds)")});
    out.tables.push_back(t);
    CHECK(rankings_without_difference("MXFP8 ends lower than BF16. Delayed scaling is worse.", out).size() == 1);
    CHECK(rankings_without_difference("- MXFP8 is better here; its scale fits the block better.", out).size() == 1);
    CHECK(rankings_without_difference("MXFP8 shows no difference from BF16. Delayed is worse.", out).empty());
}

TEST_CASE("a run context publishes partial results and takes a cancel request") {
    RunContext context;
    CHECK(context.partial() == nullptr);
    StepOutput partial;
    partial.metrics.push_back({"loss", 1.5, ""});
    context.publish(partial);
    context.report_progress(0.5, "half");
    CHECK(context.partial()->metrics[0].value == 1.5);
    CHECK(context.progress() == 0.5);
    CHECK(context.progress_text() == "half");
    CHECK(!context.cancel_requested());
    context.request_cancel();
    CHECK(context.cancel_requested());
}

TEST_CASE("lab text states the labs' experiment's settings from lab_experiment(), never typed") {
    const fp8lab::emu::Experiment e = fp8lab::labs::lab_experiment();
    CHECK(fp8lab::labs::placeholder_value("lab.seeds") == std::to_string(e.seeds));
    CHECK(fp8lab::labs::placeholder_value("lab.warmup_steps") == std::to_string(e.optimizer.schedule.warmup_steps));
    CHECK(fp8lab::labs::placeholder_value("lab.lr_floor") == "0.1");
    CHECK_THROWS_AS(fp8lab::labs::placeholder_value("lab.nothing"), fp8lab::labs::PlaceholderError);
}

TEST_CASE("numbers read as short as they are exact: grid values whole, float64 noise gone, measurements 6 digits") {
    CHECK(number_text(1.0625) == "1.0625");
    CHECK(number_text(464.00000000000006) == "464");
    CHECK(number_text(97.119140625) == "97.1191");
    CHECK(number_text(0.001953125) == "0.001953125");
    CHECK(number_text(448) == "448");
    CHECK(number_text(0.1 + 0.2) == "0.3");
    CHECK(number_text(-0.0) == "-0");
    CHECK(number_text(1e-50) == "1e-50");  // below float32: six digits
    CHECK(number_text(3.25e39) == "3.25e+39");
    CHECK(number_text(std::nan("")) == "NaN");
    CHECK(number_text(0.10931343585252762) == "0.109313");  // a measured loss: 6 digits
    CHECK(number_text(1.0562545) == "1.05625");
    CHECK(number_text(double(0.1080346f)) == "0.108035");  // a float32 measurement too
}
