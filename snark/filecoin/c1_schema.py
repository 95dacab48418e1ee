"""Reading a C1: Curio's wrapper or the raw ``SealCommitPhase1Output``, against a strict schema.

The schema is the serde layout of ``SealCommitPhase1Output`` (``rust-filecoin-proofs-api:
src/seal.rs``) with the shapes the registered proof demands: P partitions of K proofs, 15
column openings of L rows, L labeling proofs of 37 parents, Merkle proofs of the tree's
variant (``Single``/``Sub``/``Top``), path lengths and arities, every field element 32 bytes
below r (``storage-proofs-core/src/merkle/proof.rs``, ``storage-proofs-porep/src/stacked/
vanilla/{params,column,column_proof,labeling_proof,encoding_proof}.rs``); the ticket, the
seed and a prover_id are 32 raw bytes, any value (``filecoin-proofs/src/types/mod.rs``:
``[u8; 32]``). Fields may come in any order, as serde reads them; missing fields are errors,
unknown fields are ignored as serde ignores them (a newer Curio or lotus may add one) and
named once in the log, each path once per C1. The first problem in document order is
reported as one line: its path, a colon, the problem.

A C1 is mostly 32-byte arrays; ``c1_lift`` takes them out of the text in bulk and leaves
``""`` in their place. A skeleton laid out as serde writes it is read by ``c1_canonical``
without a walk; another skeleton is parsed and walked here, counting the ``""``
(``_Lifted``). If either meets anything unexpected, the text is read again in full and walked
with ``_Literal``, which checks every array where it stands, so an error message is always
the full reading's.

Optional fields proofq adds: ``MinerId`` in the wrapper (with ``SectorNum``, the sector id),
``prover_id`` and ``sector_id`` in the raw form; with them replica_id can be checked.
"""

from __future__ import annotations

import binascii
import contextvars
import logging
from collections.abc import Callable
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from snark.fields import FR_MODULUS
from snark.filecoin.c1 import (COLUMNS, COMMITMENTS, RAW_BYTES, ColumnProofs, EncodingProofs,
                               FilecoinC1, LabelingProofs, MerklePath, PathLevel, VanillaProofs)
from snark.filecoin.c1_canonical import read_canonical
from snark.filecoin.c1_base64 import decode_base64
from snark.filecoin.c1_lift import lift_domains
from snark.filecoin.challenges import prover_id_for_miner
from snark.filecoin.domain import DOMAIN_BYTES, canonical
from snark.filecoin.errors import FilecoinError
from snark.job_input import load_json, too_large
from snark.filecoin.registered_proofs import (DRG_PARENTS, EXP_PARENTS, LABEL_PARENTS,
                                              RegisteredProof, registered_proof)

log = logging.getLogger(__name__)

_U32, _U64 = 1 << 32, 1 << 64
#: A field's reader, ``(value, *extra) -> result`` (``_object``).
Reader = Callable[..., Any]
_ELEMENT_KEYS = {"hashes", "index"}
#: The unknown fields met while reading one C1, as ``<serde type>.<field>``.
_unknown: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar("unknown",
                                                                            default=None)


class _Bad(Exception):
    """A problem at a path relative to the node being read; callers prepend their part."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(message)
        self.where, self.message = where, message

    def under(self, prefix: str) -> "_Bad":
        self.where = prefix + self.where
        return self


def _note_unknown(path: str) -> None:
    seen = _unknown.get()
    if seen is not None:
        seen.add(path)


class _Unknowns:
    """Collects the unknown fields of one C1 and logs them in one line at the end."""

    def __init__(self, what: str) -> None:
        self.what = what

    def __enter__(self) -> "_Unknowns":
        self.token = _unknown.set(set())
        return self

    def __exit__(self, *exc) -> None:
        seen = _unknown.get()
        _unknown.reset(self.token)
        if seen and exc[0] is None:
            log.warning("%s: ignored unknown fields (as rust-fil-proofs' serde does): %s",
                        self.what, ", ".join(sorted(seen)))


def _kind(node: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer",
             float: "number", type(None): "null"}
    return names.get(type(node), type(node).__name__)


def _object(node: Any, fields: dict[str, Reader], *extra, kind: str) -> dict:
    """Read an object in document order: ``fields`` maps each key to a reader
    ``(value, *extra) -> result``; every key is required, any other key is ignored and
    noted as ``<kind>.<key>`` (``kind`` the serde type, e.g. ``LabelingProof``)."""
    if type(node) is not dict:
        raise _Bad("", f"expected an object, got {_kind(node)}")
    out = {}
    for key, value in node.items():
        reader = fields.get(key)
        if reader is None:
            _note_unknown(f"{kind}.{key}")
            continue
        try:
            out[key] = reader(value, *extra)
        except _Bad as bad:
            raise bad.under(f".{key}") from None
    if len(out) != len(fields):
        missing = next(key for key in fields if key not in out)
        raise _Bad(f".{missing}", "required field is missing")
    return out


def _array(node: Any, length: int, what: str) -> list:
    if type(node) is not list:
        raise _Bad("", f"expected an array of {length} {what}, got {_kind(node)}")
    if len(node) != length:
        raise _Bad("", f"expected {length} {what}, got {len(node)}")
    return node


def _uint(node: Any, limit: int, why: str = "") -> int:
    if type(node) is not int:
        raise _Bad("", f"expected an integer, got {_kind(node)}")
    if node < 0:
        raise _Bad("", f"must be >= 0, got {node}")
    if node >= limit:
        raise _Bad("", f"must be < {limit}{why}, got {node}")
    return node


def _each(items: list, read, *args) -> list:
    out = []
    for i, item in enumerate(items):
        try:
            out.append(read(item, *args))
        except _Bad as bad:
            raise bad.under(f"[{i}]") from None
    return out


# -- field elements ---------------------------------------------------------------------------

class _Lifted:
    """Field elements lifted out of the text: each ``""`` is the next row of the table."""

    def __init__(self, table: np.ndarray) -> None:
        self.table = table
        self.count = 0
        self.raw: list[int] = []

    def one(self, node: Any) -> int:
        if node != "":
            raise _Bad("", "not a lifted field element")
        self.count += 1
        return self.count - 1

    def raw_bytes(self, node: Any) -> int:
        """32 bytes that need not be below r (the ticket, the seed)."""
        self.raw.append(self.one(node))
        return self.raw[-1]

    def many(self, node: Any, length: int, what: str) -> int:
        if type(node) is not list or len(node) != length or node.count("") != length:
            raise _Bad("", "not a list of lifted field elements")
        self.count += length
        return self.count - length

    def finish(self) -> np.ndarray:
        if self.count != len(self.table):
            raise _Bad("", "lifted field elements outside the schema")
        below_r = canonical(self.table)
        below_r[self.raw] = True
        if not below_r.all():
            raise _Bad("", "a lifted value is not below r")
        return self.table


class _Literal:
    """Field elements as JSON arrays of 32 bytes, each checked where it stands."""

    def __init__(self) -> None:
        self.values: list[bytes] = []

    def one(self, node: Any) -> int:
        ordinal = self.raw_bytes(node, "bytes (a field element)")
        if int.from_bytes(self.values[-1], "little") >= FR_MODULUS:
            raise _Bad("", "not a field element (its little-endian value is not below r)")
        return ordinal

    def raw_bytes(self, node: Any, what: str = "bytes") -> int:
        """32 bytes that need not be below r (the ticket, the seed)."""
        _array(node, DOMAIN_BYTES, what)
        for i, byte in enumerate(node):
            if type(byte) is not int:
                raise _Bad(f"[{i}]", f"expected an integer, got {_kind(byte)}")
            if not 0 <= byte <= 255:
                raise _Bad(f"[{i}]", f"must be a byte (0..255), got {byte}")
        self.values.append(bytes(node))
        return len(self.values) - 1

    def many(self, node: Any, length: int, what: str) -> int:
        start = len(self.values)
        _each(_array(node, length, what), self.one)
        return start

    def finish(self) -> np.ndarray:
        return np.frombuffer(b"".join(self.values), dtype=np.uint8).reshape(-1, DOMAIN_BYTES)


# -- vanilla proofs ---------------------------------------------------------------------------

class _PathRecord:
    """The Merkle paths of one kind: per path its leaf, root (ordinals into the table of field
    elements), and per level the first sibling's ordinal and the index digit."""

    def __init__(self, shape: str, arities: tuple[int, ...]) -> None:
        self.shape, self.arities = shape, arities
        self.leaf: list[int] = []
        self.root: list[int] = []
        self.siblings: list[list[int]] = []
        self.index: list[list[int]] = []

    def add(self, path: tuple[int, int, list[int], list[int]]) -> None:
        leaf, root, siblings, index = path
        self.leaf.append(leaf)
        self.root.append(root)
        self.siblings.append(siblings)
        self.index.append(index)

    def arrays(self, table: np.ndarray, lead: tuple[int, ...]) -> MerklePath:
        depth = len(self.arities)
        siblings = np.array(self.siblings, dtype=np.int64).reshape(*lead, depth)
        index = np.array(self.index, dtype=np.int64).reshape(*lead, depth)
        levels = tuple(
            PathLevel(a, table[siblings[..., k, None] + np.arange(a - 1)], index[..., k])
            for k, a in enumerate(self.arities))
        return MerklePath(self.shape, _rows(table, self.leaf, lead),
                          _rows(table, self.root, lead), levels)


def _rows(table: np.ndarray, ordinals: npt.ArrayLike, shape: tuple[int, ...],
          count: int | None = None) -> np.ndarray:
    """Rows of the table: one per ordinal, or ``count`` consecutive ones from each."""
    start = np.array(ordinals, dtype=np.int64).reshape(shape)
    return table[start if count is None else start[..., None] + np.arange(count)]


class _Walk:
    """Reads the vanilla proofs of one registered proof into per-field records (in canonical
    order whatever order the fields come in)."""

    def __init__(self, proof: RegisteredProof, domains: _Lifted | _Literal) -> None:
        self.proof, self.domains, self.layers = proof, domains, proof.layers
        arities = proof.shape.level_arities(proof.nodes)
        self.tree_d = _PathRecord("Single", (2,) * (proof.nodes.bit_length() - 1))
        self.tree_r = _PathRecord(proof.shape.name, arities)
        self.tree_c = _PathRecord(proof.shape.name, arities)
        self.column_index: list[int] = []
        self.rows: list[int] = []
        self.labels: list[tuple[int, int, int]] = []
        self.encoding: list[tuple[int, int, int]] = []
        node_limit = (proof.nodes, f" (a sector of {proof.nodes} nodes)")
        self._proof_fields = {
            "comm_d_proofs": lambda n: self.merkle(n, self.tree_d),
            "comm_r_last_proof": lambda n: self.merkle(n, self.tree_r),
            "replica_column_proofs": self.columns,
            "labeling_proofs": lambda n: _each(_array(n, self.layers, "labeling proofs (one "
                                                      "per layer)"), self.label),
            "encoding_proof": self.label}
        self._column_fields = {"column": self.column,
                               "inclusion_proof": lambda n: self.merkle(n, self.tree_c)}
        self._columns_fields = {
            "c_x": self.column_proof,
            "drg_parents": lambda n: _each(_array(n, DRG_PARENTS, "column proofs"),
                                           self.column_proof),
            "exp_parents": lambda n: _each(_array(n, EXP_PARENTS, "column proofs"),
                                           self.column_proof)}
        self._cell_fields = {"index": lambda n: _uint(n, *node_limit),
                             "rows": lambda n: domains.many(n, self.layers, "rows"),
                             "_h": _null}
        self._label_fields = {"parents": lambda n: domains.many(n, LABEL_PARENTS, "parents"),
                              "layer_index": lambda n: _uint(n, _U32),
                              "node": lambda n: _uint(n, *node_limit)}

    # -- Merkle proofs
    def merkle(self, node: Any, record: _PathRecord) -> tuple[int, int, list[int], list[int]]:
        data = _object(node, {"data": lambda n: n}, kind="MerkleProof")["data"]
        if type(data) is not dict:
            raise _Bad(".data", f"expected an object, got {_kind(data)}")
        if len(data) != 1:
            raise _Bad(".data", f"expected exactly one of Single, Sub, Top, got {len(data)} "
                                f"fields")
        variant, body = next(iter(data.items()))
        if variant != record.shape:
            raise _Bad(".data", f"expected {record.shape} (the {self.proof.shape.display} tree "
                                f"of {self.proof.name}), got {variant!r}")
        arities = record.arities
        base = len(arities) - {"Single": 0, "Sub": 1, "Top": 2}[variant]
        parts = {"Single": (("path", arities),),
                 "Sub": (("base_proof", arities[:base]), ("sub_proof", arities[base:])),
                 "Top": (("base_proof", arities[:base]), ("sub_proof", arities[base:base + 1]),
                         ("top_proof", arities[base + 1:]))}[variant]
        fields: dict[str, Reader] = {"root": self.domains.one, "leaf": self.domains.one}
        for name, part in parts:
            fields[name] = lambda n, part=part: self.path(n, part)
        try:
            got = _object(body, fields, kind=f"{variant}Proof")
        except _Bad as bad:
            raise bad.under(f".data.{variant}") from None
        elements = [e for name, _ in parts for e in got[name]]
        return got["leaf"], got["root"], [s for s, _ in elements], [i for _, i in elements]

    def path(self, node: Any, arities: tuple[int, ...]) -> list[tuple[int, int]]:
        """Path elements (most of a C1's objects): read inline where they are as expected,
        by the generic reader (which names the problem) where they are not."""
        elements = _object(node, {"path": lambda n: _array(n, len(arities), "path elements")},
                           kind="InclusionPath")
        many = self.domains.many
        out = []
        for k, (element, arity) in enumerate(zip(elements["path"], arities)):
            if type(element) is dict and element.keys() == _ELEMENT_KEYS:
                index = element["index"]
                if type(index) is int and 0 <= index < arity:
                    try:
                        out.append((many(element["hashes"], arity - 1, "hashes"), index))
                        continue
                    except _Bad:
                        pass
            try:
                got = _object(element, {"hashes": lambda n, a=arity: many(n, a - 1, "hashes"),
                                        "index": lambda n, a=arity: _uint(n, a)},
                              kind="PathElement")
            except _Bad as bad:
                raise bad.under(f".path[{k}]") from None
            out.append((got["hashes"], got["index"]))
        return out

    # -- one challenge
    def columns(self, node: Any) -> list:
        got = _object(node, self._columns_fields, kind="ReplicaColumnProof")
        return [got["c_x"], *got["drg_parents"], *got["exp_parents"]]

    def column_proof(self, node: Any) -> tuple:
        got = _object(node, self._column_fields, kind="ColumnProof")
        return (*got["column"], got["inclusion_proof"])

    def column(self, node: Any) -> tuple[int, int]:
        got = _object(node, self._cell_fields, kind="Column")
        return got["index"], got["rows"]

    def label(self, node: Any) -> tuple[int, int, int]:
        got = _object(node, self._label_fields, kind="LabelingProof")
        return got["parents"], got["layer_index"], got["node"]

    def challenge(self, node: Any) -> None:
        got = _object(node, self._proof_fields, kind="Proof")
        self.tree_d.add(got["comm_d_proofs"])
        self.tree_r.add(got["comm_r_last_proof"])
        for index, rows, path in got["replica_column_proofs"]:
            self.column_index.append(index)
            self.rows.append(rows)
            self.tree_c.add(path)
        self.labels += got["labeling_proofs"]
        self.encoding.append(got["encoding_proof"])

    # -- the whole
    def vanilla_proofs(self, node: Any) -> None:
        tag = self.proof.vanilla_tag
        if type(node) is not dict:
            raise _Bad("", f"expected an object tagged {tag}, got {_kind(node)}")
        if list(node) != [tag]:
            raise _Bad("", f"expected the single tag {tag} (the vanilla proofs of "
                           f"{self.proof.name}), got {', '.join(map(repr, node)) or 'none'}")
        try:
            partitions = _array(node[tag], self.proof.partitions, "partitions")
            for p, part in enumerate(partitions):
                try:
                    _each(_array(part, self.proof.challenges_per_partition, "challenge proofs"),
                          self.challenge)
                except _Bad as bad:
                    raise bad.under(f"[{p}]") from None
        except _Bad as bad:
            raise bad.under(f".{tag}") from None

    def arrays(self, table: np.ndarray) -> VanillaProofs:
        p, k, layers = self.proof.partitions, self.proof.challenges_per_partition, self.layers
        lead, cols, per_layer = (p, k), (p, k, COLUMNS), (p, k, layers)
        labels, encoding = np.array(self.labels).reshape(*per_layer, 3), \
            np.array(self.encoding).reshape(*lead, 3)
        return VanillaProofs(
            comm_d=self.tree_d.arrays(table, lead),
            comm_r_last=self.tree_r.arrays(table, lead),
            columns=ColumnProofs(np.array(self.column_index, dtype=np.int64).reshape(cols),
                                 _rows(table, self.rows, cols, layers),
                                 self.tree_c.arrays(table, cols)),
            labeling=LabelingProofs(_rows(table, labels[..., 0], per_layer, LABEL_PARENTS),
                                    labels[..., 1].astype(np.int64),
                                    labels[..., 2].astype(np.int64)),
            encoding=EncodingProofs(_rows(table, encoding[..., 0], lead, LABEL_PARENTS),
                                    encoding[..., 1].astype(np.int64),
                                    encoding[..., 2].astype(np.int64)))


def _null(node: Any) -> None:
    if node is not None:
        raise _Bad("", f"expected null, got {_kind(node)}")


def _string(node: Any) -> str:
    if type(node) is not str:
        raise _Bad("", f"expected a string, got {_kind(node)}")
    return node


def _proof_name(node: Any) -> RegisteredProof:
    try:
        return registered_proof(_string(node))
    except FilecoinError as exc:
        raise _Bad("", str(exc).removeprefix("registered_proof: ")) from None


# -- documents --------------------------------------------------------------------------------

def _phase1_output(doc: Any, domains: _Lifted | _Literal) -> dict:
    """The raw ``SealCommitPhase1Output``: its fields, the vanilla proofs as arrays."""
    if type(doc) is not dict:
        raise _Bad("", f"expected a SealCommitPhase1Output object, got {_kind(doc)}")
    proof_node = doc.get("registered_proof")
    if proof_node is None:
        raise _Bad(".registered_proof", "required field is missing")
    try:
        proof = _proof_name(proof_node)
    except _Bad as bad:
        raise bad.under(".registered_proof") from None
    walk = _Walk(proof, domains)
    fields: dict[str, Reader] = {"registered_proof": lambda n: proof,
                                 "vanilla_proofs": walk.vanilla_proofs}
    fields |= {name: domains.raw_bytes if name in RAW_BYTES else domains.one
               for name in COMMITMENTS}
    optional = {"prover_id": domains.raw_bytes, "sector_id": lambda n: _uint(n, _U64)}
    present = {key: reader for key, reader in optional.items() if key in doc}
    if len(present) == 1:
        other = next(key for key in optional if key not in doc)
        raise _Bad(f".{other}", "required field is missing (prover_id and sector_id go "
                                "together)")
    got = _object(doc, fields | present, kind="SealCommitPhase1Output")
    table = domains.finish()
    got["vanilla_proofs"] = walk.arrays(table)
    for name in COMMITMENTS + (("prover_id",) if present else ()):
        got[name] = table[got[name]].tobytes()
    return got


def _check_size(raw: bytes, max_bytes: int | None, what: str) -> None:
    if max_bytes is not None and len(raw) > max_bytes:
        raise FilecoinError(too_large(what, len(raw), max_bytes))


def _loads(raw: bytes, what: str) -> Any:
    return load_json(raw, what, FilecoinError)


def _read_phase1(raw: bytes, what: str, prefix: str) -> dict:
    """Lifted first, the full reading where that meets anything unexpected."""
    skeleton, table = lift_domains(raw)
    if table is not None:
        got = read_canonical(skeleton, table)
        if got is not None:
            return got
        try:
            return _phase1_output(load_json(skeleton, what, FilecoinError), _Lifted(table))
        except (_Bad, ValueError, RecursionError):
            pass
    try:
        return _phase1_output(_loads(raw, what), _Literal())
    except _Bad as bad:
        raise FilecoinError(f"{(prefix + bad.where).lstrip('.') or what}: {bad.message}") \
            from None


def _wrapper(doc: dict) -> dict:
    return _object(doc, {"SectorNum": lambda n: _uint(n, _U64),
                         "Phase1Out": _string,
                         "SectorSize": lambda n: _uint(n, _U64)}
                   | ({"MinerId": lambda n: _uint(n, _U64)} if "MinerId" in doc else {}),
                   kind="Commit2In")


def parse_c1(raw: bytes | str, *, max_bytes: int | None = None) -> FilecoinC1:
    """Parse and check the structure of a C1 in either encoding; ``FilecoinError`` names the
    field. ``max_bytes`` bounds the text (the caller's ``max_input_bytes``), checked before
    anything is parsed.

    The raw form is recognised by its ``"vanilla_proofs"`` key, which base64 (the wrapper's
    ``Phase1Out``) cannot contain; anything else is read as a whole first."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    _check_size(raw, max_bytes, "c1")
    with _Unknowns("c1"):
        return _parse(raw, max_bytes)


def _parse(raw: bytes, max_bytes: int | None) -> FilecoinC1:
    if b'"vanilla_proofs"' in raw:
        return _c1(_read_phase1(raw, "c1", ""), "raw")
    split = _split_wrapper(raw)
    if split is not None and (c1 := _parse_wrapper(*split, max_bytes)) is not None:
        return c1
    doc = _loads(raw, "c1")
    if type(doc) is dict and "Phase1Out" in doc:
        return _parse_wrapper(doc, None, max_bytes)
    try:
        return _c1(_phase1_output(doc, _Literal()), "raw")
    except _Bad as bad:
        raise FilecoinError(f"{bad.where.lstrip('.') or 'c1'}: {bad.message}") from None


def _split_wrapper(raw: bytes) -> tuple[dict, bytes] | None:
    """Curio's wrapper without JSON-decoding its ~50 MB string: the text with the
    ``Phase1Out`` value cut out (parsed as JSON), and that value's bytes. ``None`` when it
    is not that simple (the full reading then decides)."""
    key = raw.find(b'"Phase1Out"')
    if key < 0:
        return None
    colon = raw.find(b":", key)
    start = colon + 1 + len(raw[colon + 1:colon + 64]) - len(raw[colon + 1:colon + 64].lstrip())
    end = raw.find(b'"', start + 1)
    if colon < 0 or raw[start:start + 1] != b'"' or end < 0 or raw[key + 11:colon].strip():
        return None
    rest = raw[:start] + b'""' + raw[end + 1:]
    payload = raw[start + 1:end]
    if b"\\" in payload or rest.count(b'"Phase1Out"') != 1:
        return None
    try:
        doc = load_json(rest, "c1", FilecoinError)
    except FilecoinError:
        return None
    return (doc, payload) if type(doc) is dict and doc.get("Phase1Out") == "" else None


@overload
def _parse_wrapper(doc: dict, payload: None, max_bytes: int | None) -> FilecoinC1: ...
@overload
def _parse_wrapper(doc: dict, payload: bytes, max_bytes: int | None) -> FilecoinC1 | None: ...
def _parse_wrapper(doc: dict, payload: bytes | None,
                   max_bytes: int | None) -> FilecoinC1 | None:
    """The wrapper's fields and its decoded payload (``payload``: the ``Phase1Out`` bytes
    when they were cut out of the text, ``None`` when they are in ``doc``). A cut-out
    payload that is not base64 gives ``None``: the full reading names the problem (a JSON
    reader may refuse such a string before base64 is reached)."""
    try:
        fields = _wrapper(doc)
    except _Bad as bad:
        raise FilecoinError(f"{bad.where.lstrip('.')}: {bad.message}") from None
    try:
        inner = decode_base64(payload if payload is not None else
                              fields["Phase1Out"].encode("ascii"))
    except (binascii.Error, ValueError, UnicodeEncodeError) as exc:
        if payload is not None:
            return None
        raise FilecoinError(f"Phase1Out: not valid base64 ({exc})") from None
    _check_size(inner, max_bytes, "Phase1Out")
    got = _read_phase1(inner, "Phase1Out", "Phase1Out")
    proof = got["registered_proof"]
    if fields["SectorSize"] != proof.sector_size:
        raise FilecoinError(f"SectorSize: {fields['SectorSize']} is not the sector size of "
                            f"{proof.name} ({proof.sector_size})")
    if "MinerId" in fields:
        got["prover_id"] = prover_id_for_miner(fields["MinerId"])
        got["sector_id"] = fields["SectorNum"]
    return _c1(got, "curio", sector_num=fields["SectorNum"])


def _c1(got: dict, encoding: str, sector_num: int | None = None) -> FilecoinC1:
    return FilecoinC1(proof=got["registered_proof"], comm_d=got["comm_d"], comm_r=got["comm_r"],
                      replica_id=got["replica_id"], seed=got["seed"], ticket=got["ticket"],
                      vanilla=got["vanilla_proofs"], encoding=encoding, sector_num=sector_num,
                      prover_id=got.get("prover_id"), sector_id=got.get("sector_id"))
