"""The test processes keep their compiled modules (tests/conftest.py turns bytecode writing back on).

Without the .pyc files each pytest process re-rewrites every test module's asserts, and each subprocess a test
starts recompiles the project's modules: the fast suite took 135-140 s warm here with them off, 102-108 s with them
kept."""
import sys
from pathlib import Path

import _pytest.assertion.rewrite as rewrite


def test_bytecode_writing_is_on_in_the_test_process():
    assert sys.dont_write_bytecode is False


def test_this_module_was_cached_by_the_assertion_rewriter():
    # the rewriter writes its .pyc (tagged "-pytest-") next to the module when bytecode writing is on
    here = Path(__file__)
    cached = list((here.parent / "__pycache__").glob(f"{here.stem}.{rewrite.PYTEST_TAG}.pyc"))
    assert cached, "no assertion-rewrite cache for this module: is bytecode writing off?"
