"""The GPU job: short GPU windows (one H100, 15 device minutes in all, start and transfers included; 64 MiB carried
and 64 MiB brought back per call, 10 minutes per call, no package registry) made enough for training the translator
(window `translate`) and, later, proving onnxruntime's CUDA provider (window `cuda`), everything else done on the
CPU before and after. `python -m gpujob COMMAND` runs a command (gpujob/tools/); configs/README.md is the window's
checklist.

Library modules, one job each:
- `layout`: where the job's files live (runs/gpujob/, ignored by its own .gitignore);
- `pieces`: files cut into pieces with sha256 and joined back, every hash checked;
- `corpus`: the prepared corpus packed (mix applied, vocabulary learned, ids pre-tokenised, xz) and read back;
- `packed_task`: `tx.tasks.TranslateTask` over a packed corpus;
- `training`: one run trained (fresh or resumed), ending in result.json or error.json;
- `runs`: the planned runs as detached processes (setsid) and their state;
- `shards`: chosen weights as ≤ 16 MiB shards + manifest, read back with hashes, shapes and a forward pass checked;
- `handback`: what one command may bring back, the rest left for the next;
- `job`: the GPU machine's entry, doing whatever is due;
- `plan`: both windows' calls, their planned device minutes, and which pieces each carries; `carried`: the pieces'
  manifest and send folders; `repack`: a wheel made smaller for the trip (stored, then xz); `weights`: the shipped
  weights carried for the CUDA proof; `cuda_proof`: parity and latency on the GPU; `rehearsal`: both windows on the
  CPU;
- `tree`: what the device tool sends (git's view); `slim`: the shipped weights out of it for the window;
- `layout`: where files live (the work folder /tmp/gpujob outside the checkout); `code_copy`: the job's code kept there;
- `sizes`: the size check of every planned command; `returns`: which folders hold one run's complete set of
  returned shards (named folders, or the shared returns folder); `compare`: the ship decision (the mean BLEU
  rises, both everyday directions rise, no set falls more than 1 BLEU).
"""
