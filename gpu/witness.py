"""A circuit's witness computed on the device from a ``WitnessPlan`` (``gpu.tape``).

Everything that depends only on the circuit's shape goes to the device once: each
template's encoded tape, and per call group its external references and output rows.
A partition then uploads only its private data — for a Filecoin partition the C1's
challenged values, about a megabyte at 32 GiB — and runs one ``tape_run`` launch per group,
in the plan's level order on one stream, writing the whole assignment ``[ONE, inputs…,
aux…]`` (standard-form limbs) into one device buffer that A·w and the MSMs then read.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpu import module
from gpu.tape import DeviceTape, encode
from snark.fields import fr_to_limbs

THREADS = 128
#: Shared memory one block may take (the H100/H200 opt-in limit is 227 KiB).
MAX_SHARED = 200 * 1024


@dataclass
class _Launch:
    tape: int                 # index into the uploaded tapes
    calls: int
    refs: object              # (calls, slots) int64
    aux_base: object          # (calls,) int64
    input_base: object        # (calls,) int64
    data_at: int              # first data row of the group in the partition's data
    data_words: int


class DevicePlan:
    """The device side of one plan, on ``stream``."""

    def __init__(self, plan, device_id: int, stream) -> None:
        import cupy

        self._cupy = cupy
        self.stream = stream
        self.num_inputs, self.num_aux = plan.num_inputs, plan.num_aux
        self._kernel = module.function("tape.cu", "tape_run", device_id)
        tapes: dict[int, int] = {}
        self.tapes: list[tuple[DeviceTape, dict]] = []
        self.launches: list[_Launch] = []
        ids, data_at = [], 0
        with cupy.cuda.Device(device_id), stream:
            for group in plan.groups:
                template, batch = group.template, len(group.members)
                index = tapes.get(id(template))
                if index is None:
                    tape = encode(template.tape, template.data_shapes)
                    if tape.shared_bytes > MAX_SHARED:
                        raise ValueError(f"a block's registers need {tape.shared_bytes} bytes "
                                         f"of shared memory, more than {MAX_SHARED}")
                    index = tapes[id(template)] = len(self.tapes)
                    self.tapes.append((tape, self._upload(tape)))
                tape = self.tapes[index][0]
                refs = group.refs if group.refs is not None else np.zeros((batch, 0), np.int64)
                self.launches.append(_Launch(
                    index, batch, cupy.asarray(refs.astype(np.int64)),
                    cupy.asarray(group.aux_rows[0] if tape.aux else np.zeros(batch, np.int64)),
                    cupy.asarray(group.input_rows[0] - 1 if tape.inputs
                                 else np.zeros(batch, np.int64)),
                    data_at, tape.data_words))
                # the group's data, call-major then field by field as data_rows lays it out
                ids.append(np.concatenate(
                    [group.data[name].reshape(batch, -1) for name in sorted(tape.fields)]
                    + [np.zeros((batch, 0), np.int64)], axis=1).reshape(-1).astype(np.int64))
                data_at += batch * tape.data_words
        self.data_ids = np.concatenate(ids) if ids else np.zeros(0, np.int64)

    def _upload(self, tape: DeviceTape) -> dict:
        cupy = self._cupy
        arrays = {name: cupy.asarray(np.ascontiguousarray(getattr(tape, name)))
                  for name in ("ops", "step_ends", "terms", "consts", "num_index",
                               "slot_is_num")}
        self._kernel.max_dynamic_shared_size_bytes = max(
            self._kernel.max_dynamic_shared_size_bytes, tape.shared_bytes)
        return arrays

    def data_limbs(self, values: np.ndarray) -> np.ndarray:
        """The partition's private data in launch order: ``(rows, 4)`` standard-form limbs
        (host work: one gather and one conversion)."""
        return fr_to_limbs(values[self.data_ids].tolist())

    def upload(self, values: np.ndarray):
        """Memory phase: the partition's data on the device, and the assignment's buffer."""
        cupy = self._cupy
        with self.stream:
            data = cupy.asarray(self.data_limbs(values))
            assignment = cupy.zeros((self.num_inputs + self.num_aux, 4), dtype=cupy.uint64)
        return data, assignment

    def run(self, staged):
        """Compute phase: the full assignment ``[ONE, inputs…, aux…]`` written on the device
        from the uploaded data (``upload``), ``(num_inputs + num_aux, 4)``."""
        data, assignment = staged
        with self.stream:
            assignment[0, 0] = 1
            inputs, aux = assignment[:self.num_inputs], assignment[self.num_inputs:]
            for launch in self.launches:
                tape, arrays = self.tapes[launch.tape]
                rows = data[launch.data_at:launch.data_at + launch.calls * launch.data_words]
                self._kernel(
                    (launch.calls,), (THREADS,),
                    (arrays["ops"], arrays["step_ends"], np.int32(len(tape.step_ends)),
                     arrays["terms"], arrays["consts"], arrays["num_index"],
                     arrays["slot_is_num"], np.int32(tape.slots), np.int32(tape.registers),
                     np.int32(tape.numbers), np.int32(tape.sums), np.int32(tape.aux),
                     np.int32(tape.inputs), np.int32(tape.data_words), launch.refs, rows,
                     launch.aux_base, launch.input_base, aux, inputs),
                    shared_mem=tape.shared_bytes)
        return assignment
