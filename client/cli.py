"""The ``proofq`` command: local proving commands and job commands, one click group."""

from __future__ import annotations

import click

from client.commands import jobs, local


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """proofq: Groth16 proof batches on BLS12-381, on GPUs or the CPU."""


for command in (*local.COMMANDS, *jobs.COMMANDS):
    main.add_command(command)
