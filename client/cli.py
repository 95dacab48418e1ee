"""The ``proofq`` command: the job commands, each installed proof type's commands (named by
its plug-in record, ``snark.plugins``) and the gRPC gateway, one click group."""

from __future__ import annotations

import click

from client.commands.forms import CommandForm, merged
from config.settings import SettingsError
from snark.plugins import load_attribute
from snark.registry import NoProofTypes, plugins

#: The job commands: asking for one of them (``proofq submit``) loads no other module, so a
#: producer's command never imports the prover.
JOB_COMMANDS = "client.commands.jobs:COMMANDS"
#: After the proof types' commands: the gateway Curio talks to.
LAST_COMMANDS = ("client.commands.grpc:COMMANDS",)


def command_lists() -> list[str]:
    """Where the command lists are, in loading order: the job commands, each installed
    type's (once, where several types share one list), the gateway's."""
    types = [p.commands for p in plugins() if p.commands is not None]
    return list(dict.fromkeys([JOB_COMMANDS, *types, *LAST_COMMANDS]))


class _ProofqGroup(click.Group):
    """Loads the subcommands on first use: the job commands alone when one of them is
    asked for, else every list.

    Importing the job commands builds the Celery app from the settings, so an invalid
    ``PROOFQ_*`` value surfaces here: it is reported as one line with exit code 2 instead
    of as a traceback from an import.
    """

    _loaded: tuple[str, ...] = ()

    def _load(self, ctx: click.Context, wanted: str | None = None) -> None:
        if not self._loaded:
            self._load_list(ctx, JOB_COMMANDS)
        if wanted is not None and self._loaded == (JOB_COMMANDS,) and wanted in self.commands:
            return  # a job command: complete as it is
        for path in command_lists():
            if path not in self._loaded:
                self._load_list(ctx, path)

    def _load_list(self, ctx: click.Context, path: str) -> None:
        try:
            commands = load_attribute(path)
        except (SettingsError, NoProofTypes) as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(2)
        for command in commands:
            self._add(command)
        self._loaded += (path,)

    def _add(self, command: click.Command | CommandForm) -> None:
        """Adds ``command``; a type's input form joins the other forms of its name
        (whichever type's list loads first)."""
        if isinstance(command, CommandForm):
            command = merged(self.commands.get(command.name), command)
        self.add_command(command)

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
