"""The GPU windows, call by call, and what each one costs in device minutes.

A window is 15 minutes of device time in all (device README): the machine's start, every call with its transfers,
and the machine held warm between calls all count, and no machine starts with under 4 minutes left. So each window
is planned to end by 13 minutes (`BUDGET_MIN`), leaving room to repeat its short last call once.

- `translate`: the translator v2, one run (configs/translate-v2.json) trained in the first call and handed back in
  two returns (the fp16 weights are ~76 MiB, one return carries 64 MiB); the corpus rides with the first call.
- `cuda`: a later window, once v2 is shipped: onnxruntime-gpu's wheel and the shipped weights as pieces, then in
  the last call CUDAExecutionProvider's parity with PyTorch and the latency table (`gpujob.cuda_proof`).

Every call is a `run` of the device tool with at most one carry path, `runs/gpujob/send/<name>`, holding the pieces
it carries (`gpujob.carried`). The minutes are allowances, not measurements: configs/README.md has the table where a
window records what each call really used, and these numbers are to be replaced by those.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from .layout import CODE_DIR, DEFAULT_WORK, SEND_DIR
from .pieces import MiB

LIMIT_BYTES = 64 * MiB  # what one call may carry in all (device README, Limits)
MARGIN_BYTES = 2 * MiB  # kept free per call for what the tree gains before the window (code, docs, others' files)
PIECE_BYTES = 8 * MiB  # small enough to fill each call's room closely
BUDGET_MIN = 13.0  # a window's planned device minutes at most: 15 less room to repeat one short call

# Device-time allowances in seconds, from the two translate windows run so far (H200; configs/README.md's table):
# the machine's start with the first call's transfers took 44 s and 50 s; c1's own work besides max_time (the
# job's start, batching 942k pairs, the final evaluation, the hand-back) 68 s; the gap and c2 11 s; give_back 4 s.
# Each allowance keeps a margin over what was measured.
START_S = 55.0  # the start, measured 44-50 s with the first call's transfers included
GAP_S = 20.0  # between one call's end and the next call's start: measured ~6 s when the next call was ready to paste
CLOSE_S = 10.0  # give_back at once after the last call: measured ~4 s
TRANSFER_S = 3.0  # each transfer's fixed part (sending the tree; bringing $OUT back): inside the start's 44-50 s
TRANSFER_S_PER_MIB = 0.1  # 80 MiB moved inside those 50 s: 10 MiB/s is a floor, not a measurement
TREE_BYTES = 5 * MiB  # what every call sends besides its carry, slim on (4.6 MiB measured)

# The translate call's own parts, besides the training's max_time: 68 s together in the second window, planned 90.
JOB_SETUP_S = 10.0  # python, torch and CUDA start; the code copied to /tmp/gpujob/code; the corpus joined, unpacked
TRAIN_SETUP_S = 45.0  # the run's start: the packed ids into token batches, model built (41-43 s here on 2 cores for
#                       942k pairs x 2 directions)
FINISH_S = 25.0  # after max_time: the chosen weights evaluated once more, model/ written
HAND_BACK_S = 10.0  # shards written (fp16, ~76 MiB) and the first return copied to $OUT

V2_CONFIG = Path("configs") / "translate-v2.json"  # the one run of the translate window

# How much of the corpus a run of max_time sees. What was measured is steps, not tokens: translate-v2 (6+3 layers,
# d_model 512, bf16, 24k-token batches) on an H200 ran 6,580 steps in 362 s over a 223k-pair mix and 8,119 steps
# in 452 s over all 942k pairs (configs/README.md): 18.2 and 18.0 steps a second, whatever the pairs' lengths.
# So the epochs follow from the batches one epoch cuts (`gpujob.packed_task.batches_per_epoch`, from the example
# costs the pack records): 8,119 / 1,880 = 4.3 epochs, as the run's own metrics say.
STEPS_PER_S = 18.0
MAX_EPOCHS = 5.0  # more distinct data, not more repeats (Muennighoff et al., 2023: ~4 epochs is nearly new)


def epochs_in(max_time: float, batches_per_epoch: int, steps_per_s: float = STEPS_PER_S) -> float:
    """How many times a run of max_time seconds sees each pair, at the measured steps a second."""
    return steps_per_s * max_time / batches_per_epoch if batches_per_epoch else float("inf")


@dataclass(frozen=True)
class PlannedCall:
    """One call of the device tool's `run`."""

    name: str  # also its carry folder: runs/gpujob/send/<name>
    command: str  # the command line given to `run` (in the repository root there)
    timeout_s: int  # the `timeout_s` to give (the command ends well inside it)
    run_s: float  # the seconds the command is planned to run
    carries: tuple[str, ...]  # which kinds of pieces it may carry: "corpus", "wheels", "weights"
    returns_bytes: int  # what it brings back in $OUT, about
    brings_back: str  # what comes back in $OUT, in words
    if_it_fails: str  # what to do when it fails or the machine is lost

    @property
    def carry(self) -> str:
        return str(SEND_DIR / self.name)

    def carry_list(self) -> list[str]:
        """`run`'s carry argument: the send folder when the call carries pieces."""
        return [self.carry] if self.carries else []

    def seconds(self, carried_bytes: int) -> float:
        """Device seconds: the tree and the carry sent, the command, $OUT brought back."""
        send = TRANSFER_S + (TREE_BYTES + carried_bytes) / MiB * TRANSFER_S_PER_MIB
        back = TRANSFER_S + self.returns_bytes / MiB * TRANSFER_S_PER_MIB
        return send + self.run_s + back


@dataclass(frozen=True)
class Window:
    """One GPU window: its calls in order."""

    name: str  # `python -m gpujob plan --window NAME`
    job: str  # what it is for, in one line
    calls: tuple[PlannedCall, ...]

    def seconds(self, carried: dict[str, int]) -> list[tuple[str, float]]:
        """(step, device seconds) in order: the start, each call (and the gap before the next), the close."""
        steps = [("machine start", START_S)]
        for index, call in enumerate(self.calls):
            if index:
                steps.append(("warm gap", GAP_S))
            steps.append((call.name, call.seconds(carried.get(call.name, 0))))
        return [*steps, ("give_back", CLOSE_S)]

    def total_minutes(self, carried: dict[str, int]) -> float:
        return sum(s for _, s in self.seconds(carried)) / 60


def max_time_of(config_file: Path = V2_CONFIG) -> float:
    """The run's training seconds (its config's max_time), read without building anything."""
    value = json.loads(Path(config_file).read_text()).get("max_time", 0)
    if not value or value <= 0:
        raise ValueError(f"{config_file}: max_time must be set: the translate window is planned around it")
    return float(value)


def wait_of(command: str) -> float:
    """The `--wait S` a `gpujob run` command line gives (0 when none)."""
    match = re.search(r"--wait (\d+(?:\.\d+)?)", command)
    return float(match.group(1)) if match else 0.0


RUN = "PYTHONUNBUFFERED=1 python3 -m gpujob run --out $OUT"
# later calls run the job from the code copy c1 left in the work folder, not from the checkout the device laid anew
FROM_WORK = f'OUT=$(realpath "$OUT") && cd {DEFAULT_WORK / CODE_DIR} && '

V2_TRAIN_WAIT = 570  # c1's --wait: the run's start, max_time and finish fit inside it (a test checks), and with
#                      the job's setup and hand-back inside c1's 600 s: so max_time is 490 s, not more


def translate_window(max_time: float) -> Window:
    training = TRAIN_SETUP_S + max_time + FINISH_S
    return Window("translate", "the translator v2: one run, its weights back in two returns", (
        PlannedCall(
            "c1-train", f"nvidia-smi -L; {RUN} --wait {V2_TRAIN_WAIT}", 600,
            JOB_SETUP_S + training + HAND_BACK_S, ("corpus",), 62 * MiB,
            "progress.json, manifest.json (config, tokenizer, metrics, the chosen checkpoint) and the first 4 of "
            "6 weight shards (exit 4); the output names python, torch, the GPU and each eval",
            "an error before training (exit 2 within a minute): fix, commit, call c1 again at once; still training "
            "at --wait (exit 3): call c2 at once, it waits; machine lost: the training is lost with it, call c1 "
            "again with `--max-time S` (S = the minutes left - 7, in seconds) only if 4+ device minutes are left"),
        PlannedCall(
            "c2-rest", f"{FROM_WORK}{RUN} --wait 240", 300, 25.0, (), 17 * MiB,
            "manifest.json and the last 2 shards (exit 0): `python -m gpujob unpack` here on both folders",
            "a transfer broke off: the same command with `--again` (every shard anew, in two returns); exit 4 "
            "(c1 had returned still training): call it once more; `cd: /tmp/gpujob/code: No such file`: the "
            "machine was replaced and c1's run is lost with it"),
    ))


def cuda_window(carry_calls: int = 5) -> Window:
    """Pieces first (the wheel, xz-repacked ~175 MiB, then the shipped weights, ~78 MiB with v2: ~57 MiB of pieces a
    call), then the proof in the last call, which carries the last pieces. The wheel rides on the first 4."""
    carrying = tuple(
        PlannedCall(f"w{i}-pieces", "python3 -m gpujob install-wheels --check-only", 120, 15.0,
                    ("wheels", "weights"), 0,
                    "each carried piece's size and sha256 checked (the output)",
                    "a transfer broke off or a piece is damaged: the same call again")
        for i in range(1, carry_calls))
    proof = PlannedCall(
        f"w{carry_calls}-proof",
        "python3 -m gpujob install-wheels && export PYTHONPATH=/tmp/site && python3 -m gpujob place-weights && "
        "python3 -m export models/translate --precision fp32 --no-quality --no-walkthrough --no-experiments && "
        "python3 -m export models/sentiment --precision fp32 --no-quality --no-walkthrough --no-experiments && "
        "PYTHONUNBUFFERED=1 python3 -m gpujob cuda-proof --out $OUT", 480, 240.0, ("wheels", "weights"), 1 * MiB,
        "cuda_proof.json and latency.md (parity, the latency table naming the GPU): "
        "`python -m gpujob record-latency OUT` here",
        "CUDA refuses the fused graphs: export with --traced-attention in the same command and call again")
    return Window("cuda", "onnxruntime-gpu: CUDA parity with PyTorch and a latency table", (*carrying, proof))


def windows(max_time: float | None = None) -> dict[str, Window]:
    return {"translate": translate_window(max_time_of() if max_time is None else max_time), "cuda": cuda_window()}


# Every planned call of both windows, in order: the pieces' assignment (`assign`) and the size check walk these.
PLAN: tuple[PlannedCall, ...] = tuple(c for w in windows(max_time=0).values() for c in w.calls)
COMMANDS = {c.name: c for c in PLAN}


def assign(pieces: list[tuple[str, int, str]], budget: int, plan: tuple[PlannedCall, ...] = PLAN) -> dict[str, str]:
    """{piece name: call name}: each piece (name, bytes, kind), in the order given (the corpus first: the first call
    needs it whole), to the first call, from the last one used on, that may carry its kind and still has room
    within `budget` bytes of pieces."""
    used: dict[str, int] = {c.name: 0 for c in plan}
    out: dict[str, str] = {}
    start = 0
    for name, size, kind in pieces:
        for index in range(start, len(plan)):
            command = plan[index]
            if kind in command.carries and used[command.name] + size <= budget:
                used[command.name] += size
                out[name] = command.name
                start = index
                break
        else:
            raise ValueError(f"{name} ({size / MiB:.1f} MiB of {kind}) fits no planned call: the plan carries "
                             f"at most {budget / MiB:.1f} MiB of pieces per call")
    return out


def render(window: Window, carried: dict[str, int]) -> str:
    """Every call's command, timeout_s, carry and planned minutes, and last the window's total."""
    lines = [f"window {window.name}: {window.job}"]
    for step, seconds in window.seconds(carried):
        call = next((c for c in window.calls if c.name == step), None)
        if call is None:
            lines.append(f"  {step:<14} {seconds / 60:4.1f} min")
            continue
        lines += [f"  {call.name:<14} {seconds / 60:4.1f} min (command {call.run_s / 60:.1f}, carried "
                  f"{carried.get(call.name, 0) / MiB:.1f} MiB, back {call.returns_bytes / MiB:.0f} MiB)",
                  f"    command:   {call.command}",
                  f"    timeout_s: {call.timeout_s}",
                  f"    carry:     {json.dumps(call.carry_list())}"]
    total = window.total_minutes(carried)
    lines.append(f"{total:.1f} device minutes" + ("" if total <= BUDGET_MIN else
                                                   f" (OVER the {BUDGET_MIN:.0f} planned for a 15-minute window)"))
    return "\n".join(lines)
