"""Each wrong training recipe an independent review planted must fail a fast test.

Every mutation below is applied to a copy of `tx/` (with `runtime/`, which it imports; the working tree is
never touched) and the fast recipe tests run against the copy in a subprocess; the mutation must make the
tests named beside it fail. The unmutated copy must pass, so a failure is the mutation's doing.
"""
from __future__ import annotations

import os
import re
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


def failing_tests(root: Path) -> tuple[int, set[str]]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(root), "TX_TEST_PREFETCHED": "1"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-rf", *TESTS],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)
    return proc.returncode, set(re.findall(r"^FAILED \S+::(\S+)", proc.stdout, flags=re.M))


@pytest.mark.slow
def test_the_unmutated_copy_passes(tmp_path):
    code, failed = failing_tests(mutated_copy(tmp_path, []))
    assert code == 0 and not failed


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MUTATIONS))
def test_mutation_fails_a_fast_test(name, tmp_path):
    edits, must_fail = MUTATIONS[name]
    code, failed = failing_tests(mutated_copy(tmp_path, edits))
    assert code == 1, f"{name}: pytest exited {code} (1 = some tests failed)"
    assert must_fail <= failed, f"{name}: expected {sorted(must_fail - failed)} to fail; failed: {sorted(failed)}"
