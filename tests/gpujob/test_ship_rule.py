"""Issue 48, items 4 and 5: the ship rule (gpujob.compare: the mean BLEU rises, both everyday directions rise, no
set x direction falls more than 1 BLEU, a missing score never ships) and returns from elsewhere (gpujob.returns and
`python -m gpujob unpack --from-shared`: one run's complete set of shards found in a returns folder's sub-folders,
a missing or damaged shard named, another run's set not taken, two runs mixed refused). Fast: made-up BLEU, and a
tiny model's shards.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from gpujob.compare import MAX_FALL_BLEU, compare, render
from gpujob.returns import ReturnsError, check_set, find_planned_set
from gpujob.runs import PLANNED_CONFIGS
from gpujob.shards import MANIFEST, write_shards
from gpujob.tools import unpack as unpack_tool

PLANNED = Path(PLANNED_CONFIGS[0]).stem  # the name the job's manifest gives the planned run (report.chosen.run)

# --- the ship rule --------------------------------------------------------------------------------------------------
# issue 48's case: the shipped translator's Ding test de-en is 10.36; the candidate loses 0.6 there, but about
# doubles on the docs test and the everyday set
SHIPPED = {("test", "de-en"): 10.36, ("test", "en-de"): 10.23, ("docs_test", "de-en"): 5.12,
           ("docs_test", "en-de"): 4.31, ("everyday", "de-en"): 7.20, ("everyday", "en-de"): 5.90}
CANDIDATE = {("test", "de-en"): 9.76, ("test", "en-de"): 10.41, ("docs_test", "de-en"): 10.30,
             ("docs_test", "en-de"): 8.75, ("everyday", "de-en"): 14.10, ("everyday", "en-de"): 11.62}


def with_score(scores: dict, key: tuple[str, str], value: float | None) -> dict:
    """scores with one row changed (None: that row's score missing)."""
    return {k: v for k, v in {**scores, key: value}.items() if v is not None}


def test_the_issues_case_ships_although_the_ding_test_falls_0_6():
    decision = compare(CANDIDATE, SHIPPED)
    assert decision.ship and decision.reasons == []
    ding = decision.rows[0]
    assert (ding.split, ding.direction, ding.change, ding.passes) == ("test", "de-en", -0.6, True)
    assert decision.mean_candidate > decision.mean_shipped
    table = render(decision)
    assert "falls 0.60 (at most 1.0)" in table and "\nmean " in table
    assert table.splitlines()[-1].startswith("ships: the mean BLEU rises")


def test_a_fall_of_1_01_on_one_set_is_not_shipped_and_named():
    decision = compare(with_score(CANDIDATE, ("docs_test", "en-de"), 4.31 - 1.01), SHIPPED)
    assert not decision.ship
    assert decision.reasons == ["docs_test en-de falls 1.01 BLEU (more than 1.0)"]
    assert render(decision).splitlines()[-1] == "not shipped: docs_test en-de falls 1.01 BLEU (more than 1.0)"


def test_a_fall_of_exactly_1_0_is_allowed():
    assert MAX_FALL_BLEU == 1.0
    shipped = with_score(SHIPPED, ("test", "en-de"), 8.05)
    decision = compare(with_score(CANDIDATE, ("test", "en-de"), 7.05), shipped)  # 8.05 - 7.05 is 1.0000000000000009
    assert decision.ship, decision.reasons
    assert decision.rows[1].change == -1.0 and decision.rows[1].passes


def test_everyday_en_de_not_rising_is_not_shipped():
    decision = compare(with_score(CANDIDATE, ("everyday", "en-de"), 5.90), SHIPPED)
    assert not decision.ship
    assert decision.reasons == ["everyday en-de does not rise (5.90 -> 5.90)"]
    assert "FAILS: everyday must rise" in render(decision)


def test_the_mean_not_rising_is_not_shipped():
    """Every row within the fall allowed and both everyday directions up, but the mean down: not shipped."""
    candidate = {k: v + (0.1 if k[0] == "everyday" else -0.9) for k, v in SHIPPED.items()}
    decision = compare(candidate, SHIPPED)
    assert not decision.ship and all(r.passes for r in decision.rows)
    assert decision.reasons == [f"the mean BLEU does not rise ({decision.mean_shipped:.2f} -> "
                                f"{decision.mean_candidate:.2f})"]
    assert "FAILS: must rise" in render(decision).splitlines()[-2]


def test_a_missing_score_is_not_shipped_and_says_which():
    decision = compare(with_score(CANDIDATE, ("docs_test", "en-de"), None), SHIPPED)
    assert not decision.ship and decision.mean_candidate is None
    assert decision.reasons == ["docs_test en-de has no candidate score"]
    assert "FAILS: no candidate score" in render(decision)
    decision = compare(CANDIDATE, with_score(SHIPPED, ("everyday", "de-en"), None))
    assert not decision.ship and decision.reasons == ["everyday de-en has no shipped score"]


# --- returns from elsewhere -----------------------------------------------------------------------------------------
def returned_set(model_dir: Path, result: Path, folders: list[Path], run: str = PLANNED, dtype: str = "float16"
                 ) -> list[str]:
    """A run's shards spread over `folders` as the returning commands bring them: each folder gets the manifest and
    its share of the shards, in order. Returns the shard names."""
    manifest = write_shards(model_dir, result, dtype, shard_bytes=20_000, report={"chosen": {"run": run}})
    names = [p["name"] for p in manifest["weights"]["pieces"]]
    assert len(names) >= 4, "enough shards to spread"
    share = -(-len(names) // len(folders))
    for i, folder in enumerate(folders):
        folder.mkdir(parents=True, exist_ok=True)
        for name in [MANIFEST, *names[i * share:(i + 1) * share]]:
            shutil.copyfile(result / name, folder / name)
    return names


def test_discovery_finds_the_planned_runs_set_in_one_folder_or_spread_over_two(model_dir, tmp_path):
    returns = tmp_path / "gpu-returns"
    call3, call4 = returns / "call3", returns / "call4"
    names = returned_set(model_dir, tmp_path / "result", [call3, call4])
    found = find_planned_set(returns, [PLANNED])
    assert found.run == PLANNED and found.manifest_folders == (call3, call4)
    assert sorted(found.shards) == names and {p.parent for p in found.shards.values()} == {call3, call4}
    assert check_set([tmp_path / "result"]).shards.keys() == found.shards.keys(), "one folder holding the whole set"
    alone = tmp_path / "alone"
    shutil.copytree(tmp_path / "result", alone)
    assert find_planned_set(alone, [PLANNED]).manifest_folders == (alone,), "the returns folder itself holds it"


def test_a_missing_shard_makes_the_set_incomplete_and_is_named(model_dir, tmp_path, capsys):
    returns = tmp_path / "gpu-returns"
    call3, call4 = returns / "call3", returns / "call4"
    names = returned_set(model_dir, tmp_path / "result", [call3, call4])
    (call4 / names[-1]).unlink()
    message = f"shard {names[-1]} is missing: looked in {call3}, {call4}"
    with pytest.raises(ReturnsError, match="incomplete: " + re.escape(message)):
        find_planned_set(returns, [PLANNED])
    assert unpack_tool.main([str(call3), str(call4), "--candidate", str(tmp_path / "c"), "--check-only"]) == 2
    assert message in capsys.readouterr().err


def test_a_damaged_shard_is_named(model_dir, tmp_path):
    returns = tmp_path / "gpu-returns"
    call3, call4 = returns / "call3", returns / "call4"
    names = returned_set(model_dir, tmp_path / "result", [call3, call4])
    damaged = call3 / names[1]
    data = bytearray(damaged.read_bytes())
    data[100] ^= 1  # one byte, the size unchanged: only the sha256 tells
    damaged.write_bytes(bytes(data))
    message = re.escape(f"shard {names[1]} at {damaged} has the wrong sha256")
    with pytest.raises(ReturnsError, match=message):
        check_set([call3, call4])
    with pytest.raises(ReturnsError, match=message):
        find_planned_set(returns, [PLANNED])


def test_another_runs_set_is_not_picked(model_dir, tmp_path):
    returns = tmp_path / "gpu-returns"
    returned_set(model_dir, tmp_path / "other", [returns / "a1", returns / "a2"], run="translate-v1")
    with pytest.raises(ReturnsError, match=re.escape(f"run translate-v1 in {returns / 'a1'}, {returns / 'a2'} "
                                                     "(not a planned run)")):
        find_planned_set(returns, [PLANNED])
    # beside the planned run's set (other weights: float32), the other run's folders are not even searched
    returned_set(model_dir, tmp_path / "planned", [returns / "b1", returns / "b2"], dtype="float32")
    found = find_planned_set(returns, [PLANNED])
    assert found.manifest_folders == (returns / "b1", returns / "b2") and returns / "a1" not in found.folders


def test_two_runs_manifests_mixed_are_refused_naming_the_folders(model_dir, tmp_path):
    one, other = tmp_path / "one", tmp_path / "other"
    returned_set(model_dir, tmp_path / "r1", [one])
    returned_set(model_dir, tmp_path / "r2", [other], dtype="float32")  # the same run's name, other weights
    with pytest.raises(ReturnsError, match=f"manifests of different runs: .* in {re.escape(str(one))}; "
                                           f".* in {re.escape(str(other))}"):
        check_set([one, other])
    returns = tmp_path / "gpu-returns"
    shutil.copytree(one, returns / "one")
    shutil.copytree(other, returns / "other")
    with pytest.raises(ReturnsError, match=f"found 2 complete sets of different weights .* in "
                                           f"{re.escape(str(returns / 'one'))}; .* in "
                                           f"{re.escape(str(returns / 'other'))}"):
        find_planned_set(returns, [PLANNED])


def test_unpack_from_shared_says_what_it_looked_for_and_where_when_there_is_nothing(tmp_path, capsys):
    empty = tmp_path / "gpu-returns"
    empty.mkdir()
    assert unpack_tool.main(["--from-shared", "--returns-dir", str(empty)]) == 1
    err = capsys.readouterr().err
    assert f"looked for a complete set of shards (a {MANIFEST} whose report.chosen.run is {PLANNED}" in err
    assert f"in {empty} or its sub-folders, and found none" in err
    assert unpack_tool.main(["--from-shared", "--returns-dir", str(tmp_path / "absent")]) == 1
    assert f"but {tmp_path / 'absent'} does not exist" in capsys.readouterr().err


def test_unpack_from_shared_check_only_joins_the_found_set(model_dir, tmp_path, capsys):
    returns = tmp_path / "gpu-returns"
    returned_set(model_dir, tmp_path / "result", [returns / "call3", returns / "call4"])
    candidate = tmp_path / "candidate"
    argv = ["--from-shared", "--returns-dir", str(returns), "--candidate", str(candidate), "--check-only"]
    assert unpack_tool.main(argv) == 0
    out = capsys.readouterr().out
    assert f"found run {PLANNED}'s complete set in {returns / 'call3'}, {returns / 'call4'}" in out
    assert "shards ok: " in out and f"chosen run {PLANNED}" in out
    report = json.loads((candidate / unpack_tool.REPORT).read_text())
    assert report["chosen"]["run"] == PLANNED and (candidate / "model.pt").is_file()
    assert report["returned_from"] == [str(returns / "call3"), str(returns / "call4")]
