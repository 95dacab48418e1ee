"""The one error type of ``snark.filecoin``: bad input, one line naming the field."""

from __future__ import annotations

from snark.errors import InvalidInput


class FilecoinError(InvalidInput):
    """A Filecoin input is malformed or wrong (a C1, a proof name, a size); the message is
    one line that starts with the path of the field (``vanilla_proofs.…[0][1].seed: …``)."""
