"""local commands of proofq."""

COMMANDS: list = []
