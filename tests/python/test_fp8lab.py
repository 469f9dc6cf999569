# SPDX-License-Identifier: Apache-2.0
"""The Python module against the C++ program: every format, rounding mode and saturation
on random and special inputs from float32 and float64, all 2^16 BF16 and FP16 bit
patterns, the recipes, delayed scaling and the trainer; shapes, dtypes and errors."""
import json
import os
import subprocess

import numpy as np
import pytest

import fp8lab

EXE = os.environ["FP8LAB_EXE"]
SMALL = ["e4m3", "e5m2", "e3m2", "e2m3", "e2m1", "e8m0", "e4m3fnuz", "e5m2fnuz"]


def cli(args, lines):
    """Runs the program with one value per line on stdin; its output's lines split at tabs."""
    out = subprocess.run([EXE] + args, input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
    return [line.split("\t") for line in out.stdout.splitlines() if line and not line.startswith("#")]


def cli_text(args):
    """Runs the program without input; its standard output whole."""
    return subprocess.run([EXE] + args, capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL).stdout


def cli_codes(values, fmt, dtype, rounding="nearest-even", saturate="finite", seed=0):
    text = [float(v).hex() for v in values]  # exact: hex floats, nan and inf
    rows = cli(["convert", "--to", fmt, "--round", rounding, "--saturate", saturate, "--seed", str(seed),
                "--from", "f32" if dtype == np.float32 else "f64"], text)
    return np.array([int(r[1], 16) for r in rows], dtype=np.int64)


def awkward(dtype, n=400, seed=1):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-30, 20, n))).astype(dtype)
    specials = [0.0, -0.0, np.nan, np.inf, -np.inf, 448, 464, 480, 57344, 61440, 6, 5, 0.25, 1e-40, 2.0**-149,
                np.finfo(np.float32).max, -431.99999999999994, 7.5, 7.75, 28, 30]
    x[: len(specials)] = np.array(specials, dtype=np.float64).astype(dtype)
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fmt", SMALL + ["bf16", "fp16"])
def test_every_mode_and_saturation_equals_the_program(fmt, dtype):
    x = awkward(dtype)
    for rounding in fp8lab.rounding_modes():
        for saturate in ["finite", "none"]:
            ours = fp8lab.encode(x, fmt, rounding=rounding, saturate=saturate, seed=7)
            theirs = cli_codes(x, fmt, dtype, rounding, saturate, seed=7)
            assert ours.dtype == (np.uint16 if fmt in ("bf16", "fp16") else np.uint8)
            np.testing.assert_array_equal(ours.astype(np.int64), theirs, err_msg=f"{fmt} {rounding} {saturate}")


def test_float64_is_rounded_once():
    x = np.array([-431.99999999999994])
    assert fp8lab.round_to(x, "e4m3")[0] == -416.0  # through float32 it would be -448
    assert fp8lab.round_to(x.astype(np.float32), "e4m3")[0] == -448.0


@pytest.mark.parametrize("source", ["bf16", "fp16"])
def test_every_16_bit_pattern_into_every_small_format(source):
    bits = np.arange(1 << 16, dtype=np.uint16)
    values = fp8lab.decode(bits, source)  # float32, exact
    assert values.dtype == np.float32
    for fmt in SMALL:
        ours = fp8lab.encode(values, fmt)
        np.testing.assert_array_equal(ours.astype(np.int64), cli_codes(values, fmt, np.float32), err_msg=fmt)
        # float64 inputs of the same values take the scalar path: the same codes, but for NaN,
        # which CUDA's float64 conversions treat otherwise (the sign kept; E5M2 0x7E/0xFE).
        wide = fp8lab.encode(values.astype(np.float64), fmt)
        finite = ~np.isnan(values)
        np.testing.assert_array_equal(wide[finite], ours[finite], err_msg=fmt)
        if fmt == "e5m2":
            # decode() gives the positive quiet NaN: float64's rule makes it 0x7E, float32's 0x7F.
            assert set(wide[~finite]) == {0x7E} and set(ours[~finite]) == {0x7F}
        # round_to is decode(encode()).
        np.testing.assert_array_equal(fp8lab.round_to(values, fmt), fp8lab.decode(ours, fmt), err_msg=fmt)


def test_formats_and_names():
    names = [f.name for f in fp8lab.formats()]
    assert names[:5] == ["e4m3", "e5m2", "e3m2", "e2m3", "e2m1"]
    e4m3 = fp8lab.format("float8_e4m3fn")
    assert e4m3 == fp8lab.format("e4m3")
    assert (e4m3.max, e4m3.bits, e4m3.bias, e4m3.has_inf, e4m3.ml_dtypes_name) == (448, 8, 7, False, "float8_e4m3fn")
    assert fp8lab.format("float4_e2m1fn").max == 6
    assert fp8lab.format("float8_e8m0fnu").name == "e8m0"
    fnuz = fp8lab.format("float8_e4m3fnuz")
    assert (fnuz.name, fnuz.max, fnuz.bias, fnuz.has_inf) == ("e4m3fnuz", 240, 8, False)
    assert fp8lab.format("float8_e5m2fnuz").max == 57344
    with pytest.raises(ValueError, match="name: 'e9m9' is not a format"):
        fp8lab.format("e9m9")


def test_shapes_and_dtypes():
    assert fp8lab.encode(np.array(1.5, np.float32), "e4m3").shape == ()
    assert fp8lab.encode(np.zeros((0, 3), np.float32), "e4m3").shape == (0, 3)
    x = awkward(np.float32, 24).reshape(4, 6)
    expect = fp8lab.encode(x, "e5m2")
    np.testing.assert_array_equal(fp8lab.encode(np.asfortranarray(x), "e5m2"), expect)
    np.testing.assert_array_equal(fp8lab.encode(x.T, "e5m2"), expect.T)  # non-contiguous
    np.testing.assert_array_equal(fp8lab.encode(x[:, ::2], "e5m2"), expect[:, ::2])
    with pytest.raises(ValueError, match="x: must be float32 or float64, not int64"):
        fp8lab.encode(np.arange(3), "e4m3")
    with pytest.raises(ValueError, match="rounding: 'nearest' is not"):
        fp8lab.encode(x, "e4m3", rounding="nearest")
    with pytest.raises(ValueError, match="random_bits"):
        fp8lab.encode(x, "e4m3", rounding="stochastic", random_bits=0)
    with pytest.raises(ValueError, match="codes: 256 at index 1 is not a code of e4m3"):
        fp8lab.decode(np.array([1, 256]), "e4m3")


def test_as_ml_dtypes_says_when_it_cannot():
    codes = fp8lab.encode(np.ones(3, np.float32), "e4m3")
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="ml_dtypes is not installed"):
            fp8lab.as_ml_dtypes(codes, "e4m3")
        return
    view = fp8lab.as_ml_dtypes(codes, "e4m3")
    np.testing.assert_array_equal(view.astype(np.float32), np.ones(3, np.float32))


@pytest.mark.parametrize("recipe,fmt", [("current", "e4m3"), ("current", "e2m3"), ("mx-floor", "e4m3"),
                                        ("mx-rceil", "e5m2"), ("mx-floor", "e2m1"), ("blockwise", "e4m3"),
                                        ("nvfp4", "e2m1"), ("rowwise", "e4m3")])
def test_recipes_equal_the_program(recipe, fmt):
    x = awkward(np.float32, 256, seed=3)
    x[np.isnan(x)] = 1.0
    x[np.isinf(x)] = -2.0
    ours = fp8lab.quantize(x, recipe, fmt=fmt)
    rows = cli(["quantize", "--recipe", recipe, "--to", fmt], [float(v).hex() for v in x])
    elements = [r for r in rows if r[0] == "element"]
    blocks = [r for r in rows if r[0] == "block"]
    np.testing.assert_array_equal(ours["codes"].astype(np.int64), [int(r[3], 16) for r in elements])
    np.testing.assert_array_equal(ours["scale_inv"].ravel(), [float.fromhex(r[4]) for r in blocks])
    np.testing.assert_array_equal(ours["dequantized"], np.array([float(r[4]) for r in elements], np.float32))
    if recipe == "nvfp4":
        tensor = [r for r in rows if r[0] == "tensor"][0]
        assert ours["tensor_scale_inv"] == float.fromhex(tensor[2])


def test_every_recipe_of_the_table_has_a_python_name():
    # fp8lab.recipes is the program's recipe table; each one quantize can run (all but
    # delayed, which keeps state across steps) casts here with its own element format.
    assert "rowwise" in fp8lab.recipes and "delayed" in fp8lab.recipes
    x = np.random.default_rng(2).standard_normal((16, 64)).astype(np.float32)
    for name, element in fp8lab.recipes.items():
        if name == "delayed":
            continue
        out = fp8lab.quantize(x, name, fmt=element)
        assert out["codes"].shape == x.shape and out["format"].name == element


def test_recipe_options_and_refusals():
    x = np.random.default_rng(5).standard_normal((32, 64)).astype(np.float32)
    tiles = fp8lab.quantize(x, "nvfp4", fmt="e2m1", weight_tiles=True)
    assert tiles["block"] == (16, 16) and tiles["scale_inv"].shape == (2, 4)
    assert fp8lab.quantize(x, "blockwise", block=(16, 32))["scale_inv"].shape == (2, 2)
    sr = [fp8lab.quantize(x, "nvfp4", fmt="e2m1", stochastic=True, seed=s)["codes"] for s in (1, 1, 2)]
    np.testing.assert_array_equal(sr[0], sr[1])
    assert (sr[0] != sr[2]).any()
    with pytest.raises(ValueError, match="recipe: delayed scaling keeps state"):
        fp8lab.quantize(x, "delayed")
    with pytest.raises(ValueError, match="x: the recipes compute in float32"):
        fp8lab.quantize(x.astype(np.float64), "current")
    with pytest.raises(ValueError, match="fmt: the nvfp4 recipe takes e2m1 elements"):
        fp8lab.quantize(x, "nvfp4", fmt="e4m3")


def test_scales_and_delayed_scaling_equal_the_program():
    assert fp8lab.current_scale(300.0, "e4m3") == (np.float32(448 / 300), np.float32(1 / np.float32(448 / 300)))
    assert fp8lab.current_scale(0.0, "e4m3") == (1.0, 1.0)
    amaxes = [1.0, 2.0, 0.5, 0.0, 8.0, 3.0]
    rows = cli(["scaling", "delayed", "--history", "3", "--algo", "max"], [str(a) for a in amaxes])
    d = fp8lab.DelayedScaling("e4m3", history=3, algorithm="max")
    for amax, row in zip(amaxes, rows):
        scale, scale_inv = d.step(amax)
        assert (scale, scale_inv) == (float.fromhex(row[2]), float.fromhex(row[3]))
    assert d.history.shape == (3,)
    with pytest.raises(ValueError, match="algorithm: 'mean' is not"):
        fp8lab.DelayedScaling("e4m3", algorithm="mean")


def test_trainer_equals_the_program():
    # recipe= sets the recipe with its default formats (MX: E4M3 everywhere), as --recipe does
    e = fp8lab.default_experiment(recipe="mx-rceil")
    assert e["numerics"]["formats"] == {"input": "e4m3", "weight": "e4m3", "gradient": "e4m3"}
    e["steps"] = 12
    ours = fp8lab.train(e)
    rows = cli(["train", "--steps", "12", "--recipe", "mx-rceil"], [])
    np.testing.assert_array_equal(ours["loss"], np.array([float(r[1]) for r in rows[1:]], np.float32))
    assert "mx-rceil" in ours["description"]
    # The gradients that reach their GEMMs as zero include the flushed ones; the weights moved.
    assert 0 <= ours["gradients_flushed_fraction"] <= ours["gradients_zero_fraction"] <= 1
    assert ours["weight_change"] > 0
    e["inference"] = {"enabled": True, "format": "e4m3", "activations": "per-token"}
    assert 0 < fp8lab.train(e)["inference"]["output_error"] < 0.2
    with pytest.raises(ValueError, match="steps: must be a whole number"):
        fp8lab.train({"fp8lab_experiment": 1, "steps": 0})
    with pytest.raises(ValueError, match="experiment: must be a dict or JSON text"):
        fp8lab.train(3)


def test_compare_pairs_the_seeds_as_the_program_does():
    e = fp8lab.default_experiment()
    e["steps"] = 12
    ours = fp8lab.compare(e, ["bf16", "delayed"], seeds=3)
    assert ours["measure"] == "final loss" and ours["seeds"] == 3 and ours["baseline"] == "bf16"
    bf16, delayed = ours["variants"]
    assert bf16["ratios"] == [1.0, 1.0, 1.0]
    # each seed's ratio is that seed's two final losses, as train over the same seed gives them
    for k in range(3):
        assert delayed["ratios"][k] == delayed["finals"][k] / bf16["finals"][k]
    assert delayed["low"] <= delayed["mean_ratio"] <= delayed["high"]
    assert delayed["differs"] == (delayed["low"] > 1 or delayed["high"] < 1)
    assert ("no difference found at 3 seeds" in delayed["finding"]) != delayed["differs"]
    program = json.loads(cli_text(["train", "--steps", "12", "--seeds", "3", "--compare", "bf16,delayed", "--json"]))
    assert program["variants"][1]["finals"] == delayed["finals"]
    with pytest.raises(ValueError, match="is neither fp32 nor bf16 nor an FP8 recipe"):
        fp8lab.compare(e, "bf16,fp9", seeds=2)
    with pytest.raises(ValueError, match="at least two variants"):
        fp8lab.compare(e, "bf16")


def test_train_over_seeds_reports_every_final_loss_and_their_spread():
    e = fp8lab.default_experiment()
    e["steps"] = 12
    e["seeds"] = 3
    ours = fp8lab.train(e)
    finals = ours["seeds"]["final_losses"]
    assert len(finals) == 3 and finals[0] == ours["final_loss"]
    assert ours["seeds"]["least"] == min(finals) and ours["seeds"]["largest"] == max(finals)
    assert abs(ours["seeds"]["mean"] - sum(finals) / 3) < 1e-12
    # run k is the program's run from seed 1 + k
    second = e | {"seeds": 1, "init_seed": 2, "task": e["task"] | {"seed": 2}}
    assert fp8lab.train(second)["final_loss"] == finals[1]


def test_transformer_equals_the_program_and_refuses_what_the_program_refuses(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Numbers have formats; formats have limits. The quick brown fox jumps over the lazy dog.\n" * 600)
    e = fp8lab.default_transformer_experiment()
    assert e["model"]["kind"] == "transformer" and e["task"]["kind"] == "text"
    e["steps"] = 6
    e["model"]["transformer"] |= {"width": 32, "ffn": 64, "sequence": 16}
    e["tokens"] = 64
    e["task"]["corpus"] = str(corpus)
    ours = fp8lab.train(e)
    rows = cli(["train", "--model", "transformer", "--steps", "6", "--width", "32", "--ffn", "64", "--sequence", "16",
                "--tokens", "64", "--corpus", str(corpus)], [])
    np.testing.assert_array_equal(ours["loss"], np.array([float(r[1]) for r in rows[1:]], np.float32))
    assert ours["text"]["corpus"].startswith(str(corpus))
    assert ours["text"]["validation_steps"] == [5]
    assert len(ours["text"]["greedy"]) == 80
    with pytest.raises(ValueError, match="model.transformer.heads: 3 does not divide the width"):
        fp8lab.train(e | {"model": e["model"] | {"transformer": e["model"]["transformer"] | {"heads": 3}}})
    with pytest.raises(ValueError, match="task.corpus: .*missing.txt: does not exist"):
        fp8lab.train(e | {"task": e["task"] | {"corpus": str(tmp_path / "missing.txt")}})


def test_numerics_equal_the_programs_stats_file(tmp_path):
    stats = tmp_path / "stats.csv"
    subprocess.run([EXE, "train", "--steps", "4", "--hidden", "32", "--tokens", "32", "--stats", str(stats)],
                   capture_output=True, check=True)
    lines = stats.read_text().splitlines()
    assert lines[0] == "step,tensor,amax,scale,elements,zeros,flushed,saturated,subnormal,relative_error"
    e = fp8lab.default_experiment()
    e["steps"] = 4
    e["model"]["hidden"] = 32
    e["tokens"] = 32
    n = fp8lab.train(e, numerics=True)["numerics"]
    assert len(n["tensor"]) == len(lines) - 1 == 4 * 6
    for i, line in enumerate(lines[1:]):
        f = line.split(",")
        assert (int(f[0]), f[1]) == (n["step"][i], n["tensor"][i])
        assert [int(x) for x in f[4:9]] == [n[k][i] for k in ("elements", "zeros", "flushed", "saturated", "subnormal")]
        assert np.float32(float(f[2])) == n["amax"][i] and float(f[9]) == pytest.approx(n["relative_error"][i], rel=1e-5)


def test_trace_reading_and_replay_equal_the_program(tmp_path):
    trace = tmp_path / "run.amax.csv"
    subprocess.run([EXE, "train", "--steps", "6", "--trace", str(trace)], capture_output=True, check=True)
    t = fp8lab.read_trace(str(trace))
    assert len(t["step"]) == len(t["tensor"]) == 6 * 6 and t["tensor"][0] == "fc1.input"
    # The trace carries each cast's numerics: the same as train --stats writes.
    stats = tmp_path / "run.stats.csv"
    subprocess.run([EXE, "train", "--steps", "6", "--stats", str(stats)], capture_output=True, check=True)
    by_cast = {(int(f[0]), f[1]): f for f in (line.split(",") for line in stats.read_text().splitlines()[1:])}
    for i, tensor in enumerate(t["tensor"]):
        f = by_cast[(int(t["step"][i]), tensor)]
        assert t["flushed"][i] == pytest.approx(int(f[6]) / int(f[4]))
        assert t["relative_error"][i] == pytest.approx(float(f[9]), rel=1e-5)
    replay = fp8lab.replay_trace(str(trace), history=4, algorithm="most_recent", formats="e4m3")
    rows = cli(["trace", "replay", str(trace), "--history", "4", "--algo", "most_recent", "--formats", "e4m3"], [])
    rows = [r for r in rows[1:] if len(r) == 7]
    np.testing.assert_array_equal(replay["scale"], [float.fromhex(r[3]) for r in rows])
    np.testing.assert_array_equal(replay["flushed_at_least"], [int(r[6]) for r in rows])
    assert list(replay["tensor"]) == [r[1] for r in rows]
    with pytest.raises(ValueError, match="path '.*missing.csv': cannot be read"):
        fp8lab.read_trace(str(tmp_path / "missing.csv"))
    truncated = tmp_path / "cut.csv"
    truncated.write_text("\n".join(trace.read_text().splitlines()[:-3]) + "\n")
    with pytest.raises(ValueError, match="cut.csv"):
        fp8lab.read_trace(str(truncated))


def test_the_installed_module_imports_from_its_own_place(tmp_path):
    build, cmake = os.environ.get("FP8LAB_BUILD_DIR"), os.environ.get("CMAKE_COMMAND")
    if not build or not cmake:
        pytest.skip("FP8LAB_BUILD_DIR and CMAKE_COMMAND name the build (CTest sets them)")
    for component in ("python", "Unspecified"):
        subprocess.run([cmake, "--install", build, "--prefix", str(tmp_path), "--component", component],
                       capture_output=True, check=True)
    site = next(tmp_path.glob("lib/python3*/dist-packages"))
    code = "import fp8lab, numpy; print(fp8lab.__file__); print(fp8lab.encode(numpy.array([1.5]), 'e4m3')[0])"
    out = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(site), "PATH": os.environ.get("PATH", "")}, cwd=tmp_path)
    assert out.stdout.splitlines() == [str(next(site.glob("fp8lab*.so"))), "60"]


def test_encode_into_out():
    x = awkward(np.float32, 100).reshape(10, 10)
    out = np.zeros((10, 10), np.uint8)
    assert fp8lab.encode(x, "e4m3", out=out) is not None
    np.testing.assert_array_equal(out, fp8lab.encode(x, "e4m3"))
    with pytest.raises(ValueError, match="out: must be a writable, C-ordered uint8"):
        fp8lab.encode(x, "e4m3", out=np.zeros((10, 10), np.uint16))


# Every entry point raises instead of killing the interpreter: each call runs in a child
# Python, so that a crash fails this test with the child's signal instead of ending pytest.
def run_isolated(code):
    out = subprocess.run(["/usr/bin/python3", "-c", "import fp8lab, numpy as np\n" + code],
                         capture_output=True, text=True, env=dict(os.environ))
    assert out.returncode >= 0, f"killed by signal {-out.returncode}: {code}\n{out.stderr}"
    return out


@pytest.mark.parametrize("block,error", [(-1, "ValueError: block: the column count must be from 1"),
                                         (0, "ValueError: block: the column count must be from 1"),
                                         (2**62, "ValueError: block: the column count must be from 1 to 2^40"),
                                         (2**100, "ValueError: block: the column count must be from 1 to 2^40"),
                                         ((1, -32), "ValueError: block: cols must be from 1"),
                                         ((-1, 32), "ValueError: block: rows must be from 1"),
                                         ((1, 2, 3), "ValueError: block: a (rows, cols) pair has two sides, not 3"),
                                         ("32", "TypeError: block: must be a number of columns"),
                                         (True, "TypeError: block: must be a number of columns"),
                                         ((1.0, 32), "TypeError: block: rows must be an int, not float")])
@pytest.mark.parametrize("recipe", ["mx-floor", "blockwise"])
def test_bad_block_shapes_raise(recipe, block, error):
    out = run_isolated(f"x = np.ones((4, 64), np.float32)\nfp8lab.quantize(x, '{recipe}', block={block!r})")
    assert error in out.stderr


def test_block_is_refused_where_it_does_not_apply_and_a_huge_block_is_one_block():
    x = np.ones((4, 64), np.float32)
    with pytest.raises(ValueError, match="block: the current recipe's scales are per tensor"):
        fp8lab.quantize(x, "current", block=32)
    assert fp8lab.quantize(x, "mx-floor", block=2**39)["scale_inv"].shape == (4, 1)


def test_an_input_whose_copy_cannot_be_allocated_raises_memory_error():
    # A 2^21 x 2^21 view of one float (stride 0) needs a 16 TiB C-ordered copy.
    code = ("x = np.lib.stride_tricks.as_strided(np.ones(1, {dtype}), shape=(1 << 21, 1 << 21), strides=(0, 0))\n"
            "try:\n    fp8lab.{call}\nexcept MemoryError:\n    print('MemoryError')\n")
    for dtype, call in [("np.float32", "encode(x, 'e4m3')"), ("np.float64", "round_to(x, 'e4m3')"),
                        ("np.float32", "quantize(x, 'current')")]:
        out = run_isolated(code.format(dtype=dtype, call=call))
        assert out.stdout.strip() == "MemoryError", out.stderr


def test_float32_arrays_of_every_origin_are_float32():
    import ctypes
    import pickle
    x = np.array([1.5, -448.0, 3.0e-3], np.float32)
    expected = fp8lab.encode(x, "e4m3")
    tagged = x.astype(np.dtype(np.float32, metadata={"unit": "volt"}))
    from_ctypes = np.ctypeslib.as_array((ctypes.c_float * 3)(*x))
    for y in (pickle.loads(pickle.dumps(x)), tagged, from_ctypes):
        np.testing.assert_array_equal(fp8lab.encode(y, "e4m3"), expected)
        np.testing.assert_array_equal(fp8lab.quantize(y, "current")["codes"],
                                      fp8lab.quantize(x, "current")["codes"])
        np.testing.assert_array_equal(fp8lab.round_to(y, "e4m3"), fp8lab.round_to(x, "e4m3"))
    # A big-endian float32 is not float32 in memory: refused by name, not misread.
    with pytest.raises(ValueError, match="x: must be float32 or float64"):
        fp8lab.encode(x.astype(">f4"), "e4m3")


def test_codes_and_scales_out_of_range_are_named_as_given():
    with pytest.raises(ValueError, match="codes: -1 at index 0 is not a code of e4m3"):
        fp8lab.decode(np.array([-1]), "e4m3")
    with pytest.raises(ValueError, match="codes: 18446744073709551615 at index 1 is not a code"):
        fp8lab.decode(np.array([0, 2**64 - 1], np.uint64), "e4m3")
    with pytest.raises(ValueError, match="amax: a magnitude"):
        fp8lab.current_scale(-3.0, "e4m3")


def test_train_refuses_what_does_not_fit_and_bad_threads():
    e = fp8lab.default_experiment()
    # 17 layers of 65536 x 65536 at about 24 bytes a parameter: over a TiB.
    e["model"].update(input=65536, hidden=65536, output=65536, hidden_layers=16)
    with pytest.raises(ValueError, match="experiment: this model and batch on the CPU emulator need about .* GiB"
                       r".*make model.hidden, model.hidden_layers, tokens"):
        fp8lab.train(e)
    # A transformer too large is told which of its own fields to shrink.
    t = fp8lab.default_transformer_experiment()
    t["model"]["transformer"].update(width=16384, layers=96, heads=128, kv_heads=128, ffn=65536)
    with pytest.raises(ValueError, match=r"make model.transformer.width, .layers, .ffn, .sequence or tokens smaller"):
        fp8lab.train(t)
    with pytest.raises(ValueError, match="threads: must be 0"):
        fp8lab.train(fp8lab.default_experiment(), threads=-1)
    for bad in (float("nan"), float("inf")):
        e = fp8lab.default_experiment()
        e["optimizer"]["learning_rate"] = bad
        with pytest.raises(ValueError, match="experiment: every number must be finite"):
            fp8lab.train(e)


def test_default_experiment_takes_a_recipe_with_its_formats():
    e = fp8lab.default_experiment(recipe="nvfp4")
    assert e["numerics"]["recipe"] == "nvfp4"
    assert set(e["numerics"]["formats"].values()) == {"e2m1"}
    assert fp8lab.default_experiment()["numerics"]["formats"]["input"] == "e4m3"
    assert fp8lab.default_transformer_experiment(recipe="current")["numerics"]["recipe"] == "current"
    with pytest.raises(ValueError, match="recipe: 'nvfp5' is not"):
        fp8lab.default_experiment(recipe="nvfp4".replace("4", "5"))
    with pytest.raises(TypeError, match="recipe"):
        fp8lab.default_experiment(recipe=4)
