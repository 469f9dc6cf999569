# SPDX-License-Identifier: Apache-2.0
"""fp8lab.run_step: a lab step from Python shows what the app shows, answers hidden alike."""
import matplotlib

matplotlib.use("Agg")  # no display in the tests

import numpy as np
import pytest

import fp8lab


def test_labs_lists_every_lab_and_its_steps():
    labs = fp8lab.labs()
    assert [lab["id"] for lab in labs][:2] == ["formats", "values"]
    steps = {lab["id"]: [step for step, _ in lab["steps"]] for lab in labs}
    assert "special-values" in steps["formats"]
    assert all(lab["steps"] for lab in labs)


def test_a_step_returns_its_tables_metrics_and_figure_data():
    r = fp8lab.run_step("why-scale", "gradients", decades=6)
    assert r["parameters"]["decades"] == "6"
    census = r["tables"][0]
    assert len(census["rows"]) == 2 and len(census["rows"][0]) == len(census["columns"])
    ranges = r["metrics"]
    # E4M3 spans log10(448 / 2^-9) decades, E5M2 log10(57344 / 2^-16).
    assert ranges["E4M3 range: largest / smallest subnormal, in decades"] == pytest.approx(np.log10(448 * 2**9))
    assert ranges["E5M2 range: largest / smallest subnormal, in decades"] == pytest.approx(np.log10(57344 * 2**16))
    flushed = r["figures"][0]
    assert flushed["x_axis"]["scale"] == "linear"
    e4m3, e5m2 = flushed["series"]
    assert isinstance(e4m3["x"], np.ndarray) and e4m3["x"].shape == e4m3["y"].shape
    # Past E4M3's range it loses more gradients to zero than E5M2 does.
    assert e4m3["y"][-1] > e5m2["y"][-1]


def test_what_gives_an_answer_away_stays_hidden_until_answered_right():
    hidden = fp8lab.run_step("formats", "special-values")
    column = hidden["tables"][0]["columns"].index("overflow, not saturating")
    e4m3 = hidden["tables"][0]["rows"][0]
    assert e4m3[column] == "hidden"
    assert any("Hidden until" in note for note in hidden["notes"])
    wrong = fp8lab.run_step("formats", "special-values", answer="+Inf")
    assert wrong["exercise"]["correct"] is False and wrong["exercise"]["hint"]
    assert wrong["tables"][0]["rows"][0][column] == "hidden"
    right = fp8lab.run_step("formats", "special-values", answer="NaN")
    assert right["exercise"]["correct"] is True
    assert right["tables"][0]["rows"][0][column] == "NaN"
    assert fp8lab.run_step("formats", "special-values", instructor=True)["tables"][0]["rows"][0][column] == "NaN"


def test_parameters_spelled_as_python_keywords_and_bad_input_named():
    # training/to-your-code's "first-last-bf16" as first_last_bf16 (its listings change with it).
    plain = fp8lab.run_step("training", "to-your-code")
    edges = fp8lab.run_step("training", "to-your-code", first_last_bf16=True)
    assert plain["parameters"]["first-last-bf16"] != edges["parameters"]["first-last-bf16"]
    assert [l["code"] for l in plain["listings"]] != [l["code"] for l in edges["listings"]]
    with pytest.raises(ValueError, match="'decadez' is not a parameter of this step; its parameters: decades"):
        fp8lab.run_step("why-scale", "gradients", decadez=6)
    with pytest.raises(ValueError, match="decades"):
        fp8lab.run_step("why-scale", "gradients", decades=600)
    with pytest.raises(ValueError, match="is not a lab"):
        fp8lab.run_step("no-such-lab", "x")
    with pytest.raises(ValueError, match="is not a step of formats"):
        fp8lab.run_step("formats", "no-such-step")
    with pytest.raises(ValueError, match="backend"):
        fp8lab.run_step("formats", "special-values", backend="tpu")


def test_plot_figure_draws_every_series_with_the_axes_scales():
    r = fp8lab.run_step("why-scale", "gradients")
    error = next(f for f in r["figures"] if f["y_axis"]["scale"] == "log10")
    ax = fp8lab.plot_figure(error)
    assert ax.get_yscale() == "log"
    assert len(ax.get_lines()) == len(error["series"])
    assert ax.get_title() == error["title"]
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), error["series"][0]["x"])
