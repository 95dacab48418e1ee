"""Who an error belongs to, which decides what becomes of the job (docs/ARCHITECTURE.md §7).

    InvalidInput   the user's input is wrong: the job fails, once, with this reason
    WorkerFault    this worker cannot serve the work (its key, its device, its settings, its
                   storage, a type or a limit it does not have): the work goes back to the
                   queue for another worker, and a worker that keeps meeting the fault stops
                   taking that kind of work

A class says which it is by deriving from one of these, never by deriving from a built-in
(``InvalidInput`` keeps ``ValueError`` as a base only so that callers that caught
``ValueError`` before still do).
"""

from __future__ import annotations


class InvalidInput(ValueError):
    """The user's input cannot be proved; the message is one line naming the field."""


class WorkerFault(Exception):
    """This worker cannot serve the work; another worker may."""
