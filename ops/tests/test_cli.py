from cachelab.cli import main


def test_no_command_prints_help_and_fails(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([]) == 2
    assert "usage: cachelab" in capsys.readouterr().out
