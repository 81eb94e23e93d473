"""Each wrong training recipe an independent review planted must fail a fast test.

Every mutation below is applied to a copy of `tx/` (with `runtime/`, which it imports; the working tree is
never touched) and the fast recipe tests run against the copy (one subprocess for all copies); the mutation must
make the tests named beside it fail. The unmutated copy must pass, so a failure is the mutation's doing.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TESTS = ["tests/tx/test_recipe.py"]

# name -> ([(file, text, replacement), ...], tests that must fail)
MUTATIONS: dict[str, tuple[list[tuple[str, str, str]], set[str]]] = {
    "Adam beta2 0.999": ([("tx/trainer.py", "betas=(0.9, 0.98)", "betas=(0.9, 0.999)")],
                         {"test_adam_hyper_parameters_are_the_papers"}),
    "Adam eps 1e-8": ([("tx/trainer.py", "eps=1e-9", "eps=1e-8")], {"test_adam_hyper_parameters_are_the_papers"}),
    "1/step decay": ([("tx/trainer.py", "math.sqrt(warmup / s)", "warmup / s")],
                     {"test_learning_rate_follows_the_papers_formula_at_every_step[4]",
                      "test_learning_rate_follows_the_papers_formula_at_every_step[400]",
                      "test_training_steps_use_the_scheduled_rate_and_clip"}),
    "no label smoothing in the loss": (
        [("tx/tasks/translate.py", "ignore_index=self.tokenizer.pad_id,\n                               "
                         "label_smoothing=self.cfg.label_smoothing",
          "ignore_index=self.tokenizer.pad_id,\n                               label_smoothing=0.0")],
        {"test_translation_loss_is_label_smoothed_by_hand_and_skips_padding"}),
    "label smoothing off by default": (
        [("tx/trainer.py", "label_smoothing: float = 0.1", "label_smoothing: float = 0.0")],
        {"test_recipe_defaults_are_the_papers"}),
    "no residual dropout": ([("tx/layers.py", "return x + self.dropout(out)", "return x + out"),
                             ("tx/layers.py", "return self.norm(x + self.dropout(out))", "return self.norm(x + out)")],
                            {"test_residual_drops_the_sublayer_output_not_the_stream[False]",
                             "test_residual_drops_the_sublayer_output_not_the_stream[True]",
                             "test_the_translator_applies_dropout_where_the_paper_says"}),
    "no residual dropout in the layers": (
        [("tx/layers.py", "self.res_attn = Residual(d_model, dropout, pre_norm)",
          "self.res_attn = Residual(d_model, 0.0, pre_norm)")],
        {"test_the_translator_applies_dropout_where_the_paper_says",
         "test_the_classifier_applies_dropout_to_embeddings_sublayers_and_the_pooled_vector"}),
    "no embedding dropout": ([("tx/layers.py", "return self.dropout(x + self.pe[positions])",
                               "return x + self.pe[positions]")],
                             {"test_dropout_applies_to_embeddings_plus_positional_encoding",
                              "test_the_translator_applies_dropout_where_the_paper_says"}),
    "no embedding dropout in the model": (
        [("tx/model.py", "self.positional = PositionalEncoding(c.d_model, c.max_len, c.dropout)\n        "
                         "self.encoder = Encoder(c.n_layers, c.d_model, c.n_heads, c.d_ff, c.dropout, c.pre_norm)\n"
                         "        self.decoder",
          "self.positional = PositionalEncoding(c.d_model, c.max_len)\n        "
          "self.encoder = Encoder(c.n_layers, c.d_model, c.n_heads, c.d_ff, c.dropout, c.pre_norm)\n"
          "        self.decoder")],
        {"test_the_translator_applies_dropout_where_the_paper_says"}),
    "no FFN ReLU": (
        [("tx/layers.py", "nn.Linear(d_model, d_ff), nn.ReLU(),", "nn.Linear(d_model, d_ff), nn.Identity(),")],
        {"test_feed_forward_is_max_0_then_linear_by_hand", "test_every_layers_feed_forward_has_the_relu"}),
}
# The review's combination: all of the recipe mutations at once still passed the old suite.
MUTATIONS["all at once"] = (
    [edit for name in ("Adam beta2 0.999", "Adam eps 1e-8", "1/step decay", "no label smoothing in the loss",
                       "no residual dropout", "no embedding dropout") for edit in MUTATIONS[name][0]],
    {"test_adam_hyper_parameters_are_the_papers", "test_translation_loss_is_label_smoothed_by_hand_and_skips_padding",
     "test_the_translator_applies_dropout_where_the_paper_says"})


def mutated_copy(root: Path, edits: list[tuple[str, str, str]]) -> Path:
    for package in ("tx", "runtime"):
        shutil.copytree(REPO / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "tests", root / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    for file, text, replacement in edits:
        path = root / file
        source = path.read_text(encoding="utf-8")
        assert source.count(text) == 1, f"{file}: the mutation's anchor {text!r} is not there exactly once"
        path.write_text(source.replace(text, replacement), encoding="utf-8")
    return root


# One subprocess runs the recipe tests against every copy in turn: torch is imported once, and before each copy
# every module loaded from the previous one is dropped, so `tx` is imported afresh from the copy. (A subprocess per
# copy cost about 5 s of CPU each, most of it importing torch: 11 copies, a minute of the suite.)
DRIVER = """
import json, os, sys
import pytest
import torch  # noqa: F401 - imported once for every copy

class Failures:
    def __init__(self):
        self.names = []

    def pytest_runtest_logreport(self, report):
        if report.failed:
            self.names.append(report.nodeid.split("::", 1)[1])

for root in sys.argv[1:]:
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None) or ""
        if name in ("tx", "runtime", "conftest") or name.startswith(("tx.", "runtime.")) or \
                origin.startswith(tuple(sys.argv[1:])):
            del sys.modules[name]
    sys.path.insert(0, root)
    os.chdir(root)
    failures = Failures()
    code = pytest.main(["-q", "-n", "0", "-p", "no:cacheprovider", "--rootdir", root, *TESTS], plugins=[failures])
    sys.path.remove(root)
    assert sys.modules["tx"].__file__.startswith(root), "the recipe tests did not import the copy's tx"
    print("RESULT " + json.dumps({"root": root, "code": int(code), "failed": failures.names}), flush=True)
"""


def failing_tests(roots: list[Path]) -> dict[Path, tuple[int, set[str]]]:
    """pytest's exit code and the failed test names of the recipe tests run against each copy."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TX_TEST_PREFETCHED": "1"}
    env.pop("PYTHONPATH", None)
    code = f"TESTS = {TESTS!r}\n{DRIVER}"
    proc = subprocess.run([sys.executable, "-c", code, *map(str, roots)], cwd=roots[0], env=env,
                          capture_output=True, text=True, timeout=600)
    results = [json.loads(line[len("RESULT "):]) for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert len(results) == len(roots), f"the driver stopped early ({proc.returncode}): {proc.stderr[-3000:]}"
    return {Path(r["root"]): (r["code"], set(r["failed"])) for r in results}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, tuple[int, set[str]]]:
    """Every copy (the unmutated one under the name "", then each mutation) and what its recipe tests did."""
    copies = {name: mutated_copy(tmp_path_factory.mktemp("copy"), edits)
              for name, edits in [("", [])] + [(name, edits) for name, (edits, _) in MUTATIONS.items()]}
    by_root = failing_tests(list(copies.values()))
    return {name: by_root[root] for name, root in copies.items()}


@pytest.mark.slow
def test_the_unmutated_copy_passes(outcomes):
    code, failed = outcomes[""]
    assert code == 0 and not failed


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MUTATIONS))
def test_mutation_fails_a_fast_test(name, outcomes):
    _, must_fail = MUTATIONS[name]
    code, failed = outcomes[name]
    assert code == 1, f"{name}: pytest exited {code} (1 = some tests failed)"
    assert must_fail <= failed, f"{name}: expected {sorted(must_fail - failed)} to fail; failed: {sorted(failed)}"
