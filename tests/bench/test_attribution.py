"""python -m bench attribution on the tiny exported test models: two sentences a direction, every method's deletion
AUC written, and integrated gradients' completeness reported at the first pass and as returned, with the steps the
refinement took."""
from __future__ import annotations

import json

import pytest
from app_fixtures import app_models_root

from bench import attribution

pytestmark = pytest.mark.exports


def test_the_table_and_the_refinement_are_written(tmp_path, capsys):
    out = tmp_path / "attribution.json"
    assert attribution.main(["--model-dir", str(app_models_root() / "translate"), "--sentences", "2",
                             "--steps", "4", "--out", str(out)]) == 0  # 4 steps: too few, so the refinement runs
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["ig"]["target_error"] == 0.01 and result["ig"]["max_steps"] == 1024
    for direction in ("de-en", "en-de"):
        d = result["directions"][direction]
        assert d["sentences"] == 2 and set(d["methods"]) == set(attribution.METHODS)
        assert sum(d["final_steps"].values()) == 2
        refined = sum(n for steps, n in d["final_steps"].items() if int(steps) > 4)
        # a token is refined exactly when its first pass missed 1%, and then ends within 1% or at 1,024 steps
        assert refined == d["first_pass"]["over_1pct"] >= 1
        assert d["completeness"]["over_1pct"] <= d["final_steps"].get("1024", 0)
        assert d["gradient_evaluations_mean"] > 4
    assert "at the first pass" in capsys.readouterr().out
