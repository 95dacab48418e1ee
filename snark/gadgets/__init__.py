"""bellperson-exact circuit building, at the scale of Filecoin's PoRep (130 M constraints).

Filecoin's official keys fix the R1CS that rust-fil-proofs builds with bellperson: the
variables in allocation order, the rows in ``enforce`` order, every term of every linear
combination. This package mirrors the gadgets that circuit uses (bellpepper-core's booleans
and numbers, bellperson's UInt32, MultiEq and SHA-256, multipacking) so that the same calls
make the same rows, and builds circuits of any size without one Python call per constraint:

* a gadget wrapped as a **block** (``blocks.block``) is recorded once per *signature* (the
  kinds of its inputs: constant bits, allocated bits, negated bits, numbers) into a
  ``blocks.Template``: its local variables, its rows over local, external and constant
  columns, and its outputs;
* a circuit is a ``blocks.Program``: the sequence of block calls in bellperson's order, each
  with the global variables of its inputs. Its R1CS is the templates stamped at every call
  (numpy, ``program.assemble``), its fingerprint is counted from the calls alone;
* its witness is evaluated call group by call group: the calls that depend only on values
  already known run together, one vectorised pass of the gadget's own code over the batch.

Values inside gadgets are numpy arrays over that batch: bits as ``bool``, numbers as object
arrays of ints mod r (``system``). Gadget code is written once and runs unchanged in both
roles — a ``system.Recorder`` keeps the rows, a ``system.Evaluator`` keeps the values.
"""
