"""The ``proofq`` command: local proving commands and job commands, one click group."""

from __future__ import annotations

import click

from config.settings import SettingsError


class _ProofqGroup(click.Group):
    """Loads the subcommands on first use.

    Importing the job commands builds the Celery app from the settings, so an invalid
    ``PROOFQ_*`` value surfaces here: it is reported as one line with exit code 2 instead
    of as a traceback from an import.
    """

    def _load(self, ctx: click.Context) -> None:
        if self.commands:
            return
        try:
            from client.commands import filecoin, grpc, jobs, local, snarkjs
        except SettingsError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(2)
        for command in (*local.COMMANDS, *jobs.COMMANDS, *snarkjs.COMMANDS, *filecoin.COMMANDS,
                        *grpc.COMMANDS):
            self.add_command(command)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load(ctx)
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        self._load(ctx)
        return super().get_command(ctx, name)


@click.group(cls=_ProofqGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="proofq", prog_name="proofq")
def main() -> None:
    """proofq: Groth16 proof batches on BLS12-381, on GPUs or the CPU."""
