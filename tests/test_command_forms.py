"""One command name shared by several types' forms (``client.commands.forms``): each form is
chosen by the options only it has, whichever type's list loaded first; no form given is one
line naming them all."""

from __future__ import annotations

import itertools

import click
import pytest
from click.testing import CliRunner

from client.commands.forms import CommandForm, SharedCommand, merged


def _form(markers: tuple[str, ...], summary: str) -> CommandForm:
    @click.command("prove")
    @click.option("--out", required=True)
    def command(out: str, **given) -> None:
        """The form that takes its markers."""
        click.echo(f"{summary} {out}")

    for marker in markers:
        command = click.option(marker, is_flag=True)(command)
    return CommandForm(command, markers, summary)


FORMS = [_form(("--c1",), "a C1"), _form(("--zkey", "--wtns"), "a witness"),
         _form(("--post",), "a PoSt")]


def _group(order) -> click.Group:
    group = click.Group()
    known = None
    for form in order:
        known = merged(known, form)
    group.add_command(known)
    return group


@pytest.mark.parametrize("order", list(itertools.permutations(FORMS)),
                         ids=lambda o: "-".join(f.summary[2:] for f in o))
def test_each_form_is_chosen_by_its_options_in_any_load_order(order):
    group = _group(order)
    for args, said in ((["--c1"], "a C1"), (["--wtns", "--zkey"], "a witness"),
                       (["--post"], "a PoSt")):
        result = CliRunner().invoke(group, ["prove", *args, "--out", "x"])
        assert result.exit_code == 0 and result.output == f"{said} x\n", result.output


def test_no_form_given_is_one_line_naming_every_form():
    result = CliRunner().invoke(_group(FORMS), ["prove", "--out", "x"])
    assert result.exit_code == 2
    assert result.output.strip() == "Error: give one of: --c1 / --zkey --wtns / --post"


def test_a_usual_form_takes_what_no_marker_claims():
    usual = _form((), "a stand-in")
    result = CliRunner().invoke(_group([FORMS[0], usual]), ["prove", "--out", "x"])
    assert result.output == "a stand-in x\n"


def test_the_help_lists_every_form_once():
    command = merged(merged(None, FORMS[0]), FORMS[2])
    assert isinstance(command, SharedCommand) and merged(command, FORMS[2]).forms() == [
        FORMS[0].command, FORMS[2].command]
    result = CliRunner().invoke(_group(FORMS), ["prove", "--help"])
    assert result.exit_code == 0
    assert "Prove a C1, a witness or a PoSt." in result.output
    assert result.output.count("The form that takes its markers.") == 3
