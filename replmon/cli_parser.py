"""How the command line's parser speaks (cli_args.py says what it parses): its errors
and the wrapping of its help.

- An unknown option after a command is that command's error, under its usage, with the
  nearest option it has (``replmon check: error: unknown option --duraton: did you mean
  --duration?``), or where the option belongs when the command has none like it.
  argparse alone hands a subcommand's leftovers to the top level, which prints the top
  level's usage, and Python 3.11's argparse suggests nothing.
- ``check`` is a monitoring plugin: its argument errors exit 3 (UNKNOWN) with the
  plugin's status line on stdout, as its --help says, not argparse's 2 (CRITICAL).
- Help prose is wrapped to the terminal, paragraph by paragraph; what is laid out by
  hand (a paragraph of several lines, or an indented one: the epilogs' examples) is
  kept as written.
"""

from __future__ import annotations

import argparse
import difflib
import re
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import Any, NoReturn

HELP_WIDTH = 100
"""Help prose is wrapped to the terminal, but not wider than this: long lines read badly."""


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, its prose wrapped to the terminal by paragraph (a blank line
    apart); a paragraph of several lines, or one that starts indented, stays as written
    (examples, tables)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        if width is None:
            width = min(shutil.get_terminal_size().columns, HELP_WIDTH) - 2
        super().__init__(prog, indent_increment, max_help_position, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out: list[str] = []
        for para in text.split("\n\n"):
            if "\n" in para.strip("\n") or para[:1].isspace():
                out.append("\n".join(indent + line if line else line
                                     for line in para.strip("\n").splitlines()))
            else:
                out.append(textwrap.fill(" ".join(para.split()), max(width, 20),
                                         initial_indent=indent, subsequent_indent=indent,
                                         break_on_hyphens=False))
        return "\n\n".join(out)


_WHO = {"replmon": "the live screen"}
"""How a command is named in "an option of the live screen, sample, check and record"."""


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _option_name(arg: str) -> str:
    return arg.split("=", 1)[0]


def _is_option(arg: str) -> bool:
    return arg.startswith("-") and len(arg) > 1 and not arg[1:2].isdigit()


class Parser(argparse.ArgumentParser):
    """argparse's parser with errors that say which option was meant. ``plugin``: the
    parser of ``check``, whose errors are the monitoring plugin's UNKNOWN (exit 3)."""

    plugin = False
    command = "replmon"
    """Its name in "an option of sample, check and record"."""
    instead = ""
    """Said of an option it lacks that other commands take (serve: the fleet file)."""
    elsewhere: dict[str, list[str]] | None = None
    """An option's name: the commands that take it (``note_where_options_belong``)."""
    _argv: list[str] | None = None
    """What it was given to parse (``_better`` looks at it again to say what is wrong)."""

    def __init__(self, *args: Any, plugin: bool = False, instead: str = "",
                 **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        self.plugin, self.instead = plugin, instead

    def unknown(self, args: Sequence[str]) -> list[str]:
        """The options in ``args`` this parser does not know (nor a prefix of one)."""
        found: list[str] = []
        for arg in args:
            if arg == "--":
                break
            if _is_option(arg):
                parsed = self._parse_optional(arg)
                if parsed is not None and parsed[0] is None:
                    found.append(arg)
        return found

    def unknown_message(self, extras: Sequence[str]) -> str:
        """The error for arguments this parser does not take: each unknown option with
        the nearest of its own, or where it belongs; else argparse's words."""
        options = [_option_name(a) for a in extras if _is_option(a)]
        if not options:
            return f"unrecognized arguments: {' '.join(extras)}"
        own = [s for a in self._actions for s in a.option_strings if s.startswith("--")]
        parts: list[str] = []
        for name in dict.fromkeys(options):
            near = difflib.get_close_matches(name, own, n=1)
            takers = [c for c in (self.elsewhere or {}).get(name, []) if c != self.command]
            if takers and self.instead and "replmon" in takers:  # a pair's option
                parts.append(f"unknown option {name} ({self.instead})")
            elif takers:  # a real option, of other commands: not a typo of one of ours
                parts.append(f"unknown option {name} (an option of "
                             f"{_and([_WHO.get(c, c) for c in takers])}, not of {self.command})")
            elif near:
                parts.append(f"unknown option {name}: did you mean {near[0]}?")
            else:
                parts.append(f"unknown option {name} ({self.prog} --help lists the options)")
        return "; ".join(parts)

    def _commands(self) -> dict[str, argparse.ArgumentParser]:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                return dict(action.choices)
        return {}

    def _better(self, message: str) -> str:
        """argparse's message, or what the user got wrong as said here: an unknown option
        before the command (argparse takes its value for the command), a command's typo."""
        commands = self._commands()
        head: list[str] = []
        for arg in self._argv or []:
            if arg in commands or arg == "--":
                break
            head.append(arg)
        unknown = self.unknown(head)
        if unknown:
            return self.unknown_message(unknown)
        typo = re.match(r"argument COMMAND: invalid choice: '(.*)' \(choose from", message)
        if typo and commands:
            near = difflib.get_close_matches(typo[1], list(commands), n=1)
            return (f"no command {typo[1]!r}: "
                    + (f"did you mean {near[0]}?" if near
                       else f"the commands are {_and(list(commands))}"))
        return message

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None,
                         ) -> tuple[argparse.Namespace, list[str]]:
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(self._argv, namespace)

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        ns, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error(self.unknown_message(extras))
        return ns

    def error(self, message: str) -> NoReturn:
        message = self._better(message)
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        if self.plugin:  # Monitoring Plugins: a usage error is UNKNOWN, said on stdout
            print(f"REPLMON UNKNOWN - bad arguments: {message}")
            self.exit(3)
        self.exit(2)


class Commands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """The subcommands: a command's unknown options are its own error, under its usage,
    before anything else it would say (a required option missing)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        sub = self._name_parser_map.get(values[0]) if values else None
        if isinstance(sub, Parser):
            unknown = sub.unknown(values[1:])
            if unknown:
                sub.error(sub.unknown_message(unknown))
        super().__call__(parser, namespace, values, option_string)
        extras = vars(namespace).pop(argparse._UNRECOGNIZED_ARGS_ATTR, None)
        if extras and isinstance(sub, Parser):
            sub.error(sub.unknown_message(extras))
        elif extras:
            setattr(namespace, argparse._UNRECOGNIZED_ARGS_ATTR, extras)


def note_where_options_belong(top: argparse.ArgumentParser) -> None:
    """Tell ``top`` and its commands (each a Parser) which commands take each option."""
    parsers: list[tuple[str, argparse.ArgumentParser]] = [("replmon", top)]
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            parsers += list(action.choices.items())
    where: dict[str, list[str]] = {}
    for name, p in parsers:
        for action in p._actions:
            for s in action.option_strings:
                if s not in ("-h", "--help", "-v", "--verbose"):
                    where.setdefault(s, []).append(name)
    for name, p in parsers:
        if isinstance(p, Parser):
            p.command, p.elsewhere = name, where
