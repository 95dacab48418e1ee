"""One command name, several input forms: ``proofq prove --c1 …`` (a C1), ``--zkey --wtns``
(a circom witness), ``--update`` (a SnapDeals update), ``--post`` (a PoSt partition).

Each proof type's command list holds its own form (``CommandForm``: its command, the options
only it has, and its part of the one-line help); no type imports another's. The ``proofq``
group merges the forms of one name into one ``SharedCommand``, whichever type's list loads
first (``client.cli``)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Sequence

import click

from client.commands.common import BadInput


@dataclass(frozen=True)
class CommandForm:
    """A type's form of a command: ``command``, chosen when an argument is one of
    ``markers`` (none: the usual form, chosen otherwise), and ``summary``, what it takes
    ("a circom witness (--zkey --wtns)")."""

    command: click.Command
    markers: tuple[str, ...]
    summary: str

    @property
    def name(self) -> str:
        return self.command.name or ""


class SharedCommand(click.Command):
    """One command name with several input forms, told apart by options only one form has."""

    def __init__(self, forms: Sequence[CommandForm]) -> None:
        self.usual = next((form for form in forms if not form.markers), None)
        self.marked = [form for form in forms if form.markers]
        self.all = ([self.usual] if self.usual else []) + self.marked
        summaries = [form.summary for form in self.all]
        listed = (", ".join(summaries[:-1]) + " or " + summaries[-1] if len(summaries) > 1
                  else summaries[0])
        super().__init__(forms[0].name, short_help=f"{forms[0].name.capitalize()} {listed}.")

    def forms(self) -> list[click.Command]:
        return [form.command for form in self.all]

    def make_context(self, info_name, args, parent=None, **extra):
        given = {arg.split("=", 1)[0] for arg in args}
        chosen = next((form for form in self.marked if given & set(form.markers)), None)
        if chosen is None and given & {"-h", "--help"}:
            click.echo(self.combined_help(info_name, parent), nl=False)
            raise click.exceptions.Exit(0)
        chosen = chosen or self.usual
        if chosen is None:
            markers = " / ".join(" ".join(form.markers) for form in self.marked)
            raise BadInput(f"give one of: {markers}")
        return chosen.command.make_context(info_name, args, parent=parent, **extra)

    def combined_help(self, info_name: str | None, parent: click.Context | None) -> str:
        """One usage line and what the command does, then each form: its description and
        its options (not one whole help per form, each with its own usage)."""
        ctx = click.Context(self, info_name=info_name, parent=parent)
        formatter = ctx.make_formatter()
        formatter.write_usage(ctx.command_path, "[OPTIONS]")
        formatter.write_paragraph()
        with formatter.indentation():
            formatter.write_text(self.short_help or "")
        for command in self.forms():
            formatter.write_paragraph()
            formatter.write_text(inspect.cleandoc(command.help or "").split("\n\n")[0])
            with formatter.indentation():
                command.format_options(click.Context(command, info_name=info_name,
                                                     parent=parent), formatter)
        return formatter.getvalue()


def merged(known: click.Command | None, form: CommandForm) -> SharedCommand:
    """The command of ``form``'s name once ``form`` joins the forms ``known`` has."""
    forms = list(known.all) if isinstance(known, SharedCommand) else []
    return SharedCommand([*forms, form] if form not in forms else forms)
