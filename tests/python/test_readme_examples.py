# SPDX-License-Identifier: Apache-2.0
"""Every Python example in the READMEs (and docs/python.md) runs as written: each ```python block is executed
on its own, in a scratch folder, with the module under test."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
READMES = [ROOT / "README.md", ROOT / "python" / "README.md", ROOT / "docs" / "python.md"]


def python_blocks():
    for readme in READMES:
        text = readme.read_text(encoding="utf-8")
        for match in re.finditer(r"^```python\n(.*?)^```$", text, re.S | re.M):
            line = text.count("\n", 0, match.start()) + 1
            yield pytest.param(match.group(1), id=f"{readme.relative_to(ROOT)}:{line}")


BLOCKS = list(python_blocks())


def test_the_readmes_have_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("code", BLOCKS)
def test_readme_example_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README example", "exec"), {"__name__": "readme_example"})
