"""#54 item 3, the command line: an unknown option is the command's own error (its usage,
the nearest option or where the option belongs), check's usage errors are UNKNOWN."""

from __future__ import annotations

import pytest

from replmon.cli import main


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(argv)
    out = capsys.readouterr()
    return int(e.value.code or 0), out.out, out.err


def test_a_typo_after_check_is_checks_error_with_the_option_meant(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _error(["check", "--duraton", "5"], capsys)
    assert err.startswith("usage: replmon check "), err
    assert "COMMAND ..." not in err  # not the top level's usage
    assert err.splitlines()[-1] == ("replmon check: error: unknown option --duraton: "
                                    "did you mean --duration?")
    # a monitoring plugin: bad arguments are UNKNOWN (3) on stdout, as check --help says
    assert code == 3
    assert out == "REPLMON UNKNOWN - bad arguments: unknown option --duraton: did you mean " \
                  "--duration?\n"


def test_an_option_serve_lacks_is_serves_error_before_its_missing_config(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for argv in (["serve", "--no-drbd"], ["serve", "--config", "fleet.toml", "--no-drbd"]):
        code, out, err = _error(argv, capsys)
        assert code == 2 and out == ""
        assert err.startswith("usage: replmon serve "), err
        assert err.splitlines()[-1] == (
            "replmon serve: error: unknown option --no-drbd (serve sets its pairs in the "
            "fleet file: docs/prometheus.md)")


def test_an_option_of_other_commands_says_whose_it_is(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = _error(["report", "x.rmrec", "--no-drbd"], capsys)
    assert code == 2 and err.startswith("usage: replmon report ")
    assert err.splitlines()[-1] == (
        "replmon report: error: unknown option --no-drbd (an option of the live screen, "
        "sample, check and record, not of report)")
    # a real option elsewhere is not taken for a typo of a near one (--plain, --pair)
    code, _, err = _error(["check", "--plain"], capsys)
    assert code == 3
    assert err.splitlines()[-1].endswith(
        "unknown option --plain (an option of the live screen and serve, not of check)")


def test_the_top_level_suggests_too(capsys: pytest.CaptureFixture[str]) -> None:
    # argparse took "db1" for the command: the typo before it is what went wrong
    code, _, err = _error(["--primray", "db1", "--replica", "db2"], capsys)
    assert code == 2
    assert err.splitlines()[-1] == "replmon: error: unknown option --primray: did you " \
                                   "mean --primary?"
    code, _, err = _error(["chek"], capsys)
    assert err.splitlines()[-1] == "replmon: error: no command 'chek': did you mean check?"


def test_prefixes_and_leftover_arguments_stay_argparses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from replmon.cli_args import build_parser

    assert build_parser().parse_args(["check", "--dur", "5s"]).duration == 5.0
    code, _, err = _error(["report", "a.rmrec", "b.rmrec"], capsys)
    assert code == 2 and err.startswith("usage: replmon report ")
    assert err.splitlines()[-1] == "replmon report: error: unrecognized arguments: b.rmrec"
