"""The ``proofq`` command: local proving commands and job commands, one click group."""

from __future__ import annotations

import importlib

import click

from config.settings import SettingsError


#: The modules of the subcommands, the job commands first: asking for one of them (``proofq
#: submit``) loads no other, so a producer's command never imports the prover. Any other
#: command loads them all: later modules add input forms to earlier ones' commands (``seal``,
#: ``prove`` and ``verify`` of a Filecoin C1, a circom witness, a PoSt partition).
COMMAND_MODULES = ("jobs", "local", "snarkjs", "filecoin", "snap", "post", "grpc")


class _ProofqGroup(click.Group):
    """Loads the subcommands on first use: the job commands alone when one of them is
    asked for, else every module.

    Importing the job commands builds the Celery app from the settings, so an invalid
    ``PROOFQ_*`` value surfaces here: it is reported as one line with exit code 2 instead
    of as a traceback from an import.
    """

    _loaded: tuple[str, ...] = ()

    def _load(self, ctx: click.Context, wanted: str | None = None) -> None:
        for name in COMMAND_MODULES:
            if wanted is not None and self._loaded == COMMAND_MODULES[:1] \
                    and wanted in self.commands:
                return  # a job command: complete as it is
            if name in self._loaded:
                continue
            try:
                module = importlib.import_module(f"client.commands.{name}")
            except SettingsError as exc:
                click.echo(f"Error: {exc}", err=True)
                ctx.exit(2)
            for command in module.COMMANDS:
                self.add_command(command)
            self._loaded += (name,)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load(ctx)
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        self._load(ctx, name)
        return super().get_command(ctx, name)


@click.group(cls=_ProofqGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="proofq", prog_name="proofq")
def main() -> None:
    """proofq: Groth16 proof batches on BLS12-381, on GPUs or the CPU."""
