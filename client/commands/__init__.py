"""Subcommands of ``proofq``, one module per family."""
