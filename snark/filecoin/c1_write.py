"""Writing a C1 as Curio and rust-filecoin-proofs-api do.

The raw form is serde_json's compact output of ``SealCommitPhase1Output``: fields in
declaration order, field elements as arrays of 32 integers, no whitespace. Curio's wrapper
is Go's ``json.Marshal`` of ``{SectorNum int64, Phase1Out []byte, SectorSize uint64}``: the
``[]byte`` as standard base64 with padding (``curio:lib/ffi/cuzk_funcs.go``). The optional
``prover_id``/``sector_id`` fields (proofq's) are written only when asked for.
"""

from __future__ import annotations

import base64
from collections.abc import Callable

import numpy as np

from snark.filecoin.c1 import COMMITMENTS, FilecoinC1, MerklePath, VanillaProofs
from snark.filecoin.domain import DOMAIN_BYTES
from snark.filecoin.registered_proofs import (DRG_PARENTS, EXP_PARENTS, LABEL_PARENTS,
                                              RegisteredProof)

_BYTE = [str(i) for i in range(256)]
#: Renders field elements ``(n, 32)`` as their JSON texts.
Render = Callable[[np.ndarray], list[str]]


def json_domains(values: np.ndarray) -> list[str]:
    """JSON text of each 32-byte value of ``values (..., 32)``, in order."""
    flat = np.asarray(values, dtype=np.uint8).reshape(-1, DOMAIN_BYTES).tolist()
    return ["[" + ",".join([_BYTE[v] for v in row]) + "]" for row in flat]


class _Texts:
    """Texts of all field elements of one kind, handed out in order."""

    def __init__(self, values: np.ndarray, render: Render) -> None:
        self._texts = iter(render(values))

    def next(self) -> str:
        return next(self._texts)

    def list(self, count: int) -> str:
        return "[" + ",".join(next(self._texts) for _ in range(count)) + "]"


def _paths(path: MerklePath, render: Render) -> list[str]:
    """JSON text of every Merkle proof of ``path``, leading axes flattened."""
    leaves, roots = _Texts(path.leaf, render), _Texts(path.root, render)
    siblings = [_Texts(level.siblings, render) for level in path.levels]
    indices = [level.index.reshape(-1).tolist() for level in path.levels]
    parts = {"Single": ("path",), "Sub": ("base_proof", "sub_proof"),
             "Top": ("base_proof", "sub_proof", "top_proof")}[path.shape]
    split = len(path.levels) - (len(parts) - 1)
    groups = [range(split)] + [range(k, k + 1) for k in range(split, len(path.levels))]
    out = []
    for n in range(len(indices[0]) if indices else path.leaf.size // DOMAIN_BYTES):
        def elements(levels: range, n=n) -> str:
            return '{"path":[' + ",".join(
                f'{{"hashes":{siblings[k].list(path.levels[k].arity - 1)},'
                f'"index":{indices[k][n]}}}' for k in levels) + "]}"
        inner = [f'"{name}":{elements(levels)}' for name, levels in zip(parts, groups)]
        root, leaf = f'"root":{roots.next()}', f'"leaf":{leaves.next()}'
        body = [root, leaf, *inner] if path.shape == "Single" else [*inner, root, leaf]
        out.append(f'{{"data":{{"{path.shape}":{{{",".join(body)}}}}}}}')
    return out


def challenge_texts(vanilla: VanillaProofs, render: Render = json_domains) -> list[str]:
    """The JSON text of each challenge's vanilla proof, leading axes flattened."""
    layers = vanilla.columns.rows.shape[-2]
    comm_d, comm_r_last = _paths(vanilla.comm_d, render), _paths(vanilla.comm_r_last, render)
    column_paths = _paths(vanilla.columns.path, render)
    rows = _Texts(vanilla.columns.rows, render)
    column_index = vanilla.columns.index.reshape(-1).tolist()
    labels = _Texts(vanilla.labeling.parents, render)
    encoding = _Texts(vanilla.encoding.parents, render)
    label_meta = zip(vanilla.labeling.layer_index.reshape(-1).tolist(),
                     vanilla.labeling.node.reshape(-1).tolist())
    encoding_meta = zip(vanilla.encoding.layer_index.reshape(-1).tolist(),
                        vanilla.encoding.node.reshape(-1).tolist())
    columns = iter(zip(column_index, column_paths))

    def column() -> str:
        index, path = next(columns)
        return (f'{{"column":{{"index":{index},"rows":{rows.list(layers)},"_h":null}},'
                f'"inclusion_proof":{path}}}')

    def label(texts: _Texts, meta) -> str:
        layer, node = next(meta)
        return (f'{{"parents":{texts.list(LABEL_PARENTS)},"layer_index":{layer},'
                f'"node":{node}}}')

    proofs = []
    for q in range(len(comm_d)):
        c_x = column()
        drg = ",".join(column() for _ in range(DRG_PARENTS))
        exp = ",".join(column() for _ in range(EXP_PARENTS))
        labeling = ",".join(label(labels, label_meta) for _ in range(layers))
        proofs.append(
            f'{{"comm_d_proofs":{comm_d[q]},"comm_r_last_proof":{comm_r_last[q]},'
            f'"replica_column_proofs":{{"c_x":{c_x},"drg_parents":[{drg}],'
            f'"exp_parents":[{exp}]}},"labeling_proofs":[{labeling}],'
            f'"encoding_proof":{label(encoding, encoding_meta)}}}')
    return proofs


def document(proof: RegisteredProof, challenges: list[str], tail: list[str]) -> str:
    """The raw form around the challenges' texts (partition-major) and the tail fields."""
    k = proof.challenges_per_partition
    nested = ",".join("[" + ",".join(challenges[p * k:(p + 1) * k]) + "]"
                      for p in range(len(challenges) // k))
    head = [f'"registered_proof":"{proof.name}"',
            f'"vanilla_proofs":{{"{proof.vanilla_tag}":[{nested}]}}']
    return "{" + ",".join(head + tail) + "}"


def tail_fields(c1: FilecoinC1, with_ids: bool, render: Render = json_domains) -> list[str]:
    """The fields after the vanilla proofs: the commitments, then (asked for) the ids."""
    value = lambda b: render(np.frombuffer(b, dtype=np.uint8))[0]  # noqa: E731
    fields = [f'"{name}":{value(getattr(c1, name))}' for name in COMMITMENTS]
    if with_ids:
        fields += [f'"prover_id":{value(c1.prover_id)}', f'"sector_id":{c1.sector_id}']
    return fields


def phase1_json(c1: FilecoinC1, *, with_ids: bool = False) -> bytes:
    """The raw ``SealCommitPhase1Output`` JSON (with ``prover_id``/``sector_id`` if asked)."""
    return document(c1.proof, challenge_texts(c1.vanilla), tail_fields(c1, with_ids)).encode()


def curio_json(c1: FilecoinC1, sector_num: int) -> bytes:
    """Curio's wrapper around the raw form, exactly as Go writes it."""
    phase1 = base64.b64encode(phase1_json(c1)).decode()
    return (f'{{"SectorNum":{sector_num},"Phase1Out":"{phase1}",'
            f'"SectorSize":{c1.proof.sector_size}}}').encode()
