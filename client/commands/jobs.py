"""jobs commands of proofq."""

COMMANDS: list = []
