# SPDX-License-Identifier: Apache-2.0
"""`fp8lab train --export-code`: every Python form parses for every recipe, the Megatron form
is flags, and a wrong target is refused with the choices named."""
import os
import subprocess

import pytest

EXE = os.environ.get("FP8LAB_EXE", "build/app/fp8lab")
RECIPES = ["delayed", "current", "mx-floor", "mx-rceil", "blockwise", "nvfp4", "rowwise"]


def export(target, *options):
    return subprocess.run([EXE, "train", "--export-code", target, *options], capture_output=True, text=True,
                          check=True)


@pytest.mark.parametrize("recipe", RECIPES)
@pytest.mark.parametrize("target", ["te", "torchao", "pytorch"])
def test_python_forms_parse(target, recipe):
    out = export(target, "--recipe", recipe)
    compile(out.stdout, f"{target}-{recipe}.py", "exec")  # raises SyntaxError if it is not Python
    assert out.stdout.startswith("#")


@pytest.mark.parametrize("recipe", RECIPES)
def test_megatron_form_is_flags(recipe):
    lines = [line for line in export("megatron", "--recipe", recipe).stdout.splitlines()
             if line and not line.startswith("#")]
    assert lines and all(line.startswith("--") for line in lines)


def test_the_script_trains_what_the_options_say():
    script = export("pytorch", "--steps", "77", "--hidden", "320").stdout
    assert "D_IN, HIDDEN, HIDDEN_LAYERS, D_OUT = 64, 320, 1, 64" in script
    assert ", 77, " in script.split("TOKENS, BATCHES, STEPS")[1].splitlines()[0]


def test_differences_go_to_stderr():
    out = export("torchao")
    assert "differs: torchao's float8 training" in out.stderr
    assert "differs" not in out.stdout


def test_an_unknown_target_is_refused_by_name():
    r = subprocess.run([EXE, "train", "--export-code", "jax"], capture_output=True, text=True)
    assert r.returncode != 0
    assert "te, torchao, megatron or pytorch" in r.stderr
