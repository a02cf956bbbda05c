"""compare-qrels' smaller cases of issue 35: counts that mean nothing below 1 (or 0) are
refused by the parser with a usage message, here and in the commands beside it; a qrels file
changed since ``irbench run`` stored its leaderboard is never mixed with that stale
leaderboard."""

from __future__ import annotations

import pytest
from campaigns import make_campaign

from irbench import cli
from irbench.errors import NotStoredError

REFUSED = [  # (argv, the option, what it must be)
    (["compare-qrels", "c.yaml", "--top", "-5"], "--top", "a positive integer, not -5"),
    (["compare-qrels", "c.yaml", "--top", "0"], "--top", "a positive integer, not 0"),
    (["compare-qrels", "c.yaml", "--top", "ten"], "--top", "a positive integer, not 'ten'"),
    (["compare-qrels", "c.yaml", "--wait", "-1"], "--wait", "a number of seconds >= 0"),
    (["compare-qrels", "c.yaml", "--wait", "nan"], "--wait", "a number of seconds >= 0"),
    (["pool", "build", "c.yaml", "--budget", "-1"], "--budget", "a positive integer"),
    (["pool", "build", "c.yaml", "--total", "0"], "--total", "a positive integer"),
    (["pool", "build", "c.yaml", "--per-group", "0"], "--per-group", "a positive integer"),
    (["pool", "build", "c.yaml", "--seed", "-1"], "--seed", "a whole number >= 0"),
    (["pool", "simulate", "c.yaml", "--seed", "-3"], "--seed", "a whole number >= 0"),
    (["pool", "next", "c.yaml", "--name", "p", "--batch", "0"], "--batch",
     "a positive integer"),
    (["pool", "bias", "c.yaml", "--top", "-5"], "--top", "a positive integer"),
    (["pool", "status", "c.yaml", "--name", "p", "--wait", "-2"], "--wait",
     "a number of seconds >= 0"),
    (["judge", "c.yaml", "--judge", "j", "--holes", "q", "--depth", "0"], "--depth",
     "a positive integer"),
    (["judge", "c.yaml", "--judge", "j", "--holes", "q", "--max-calls", "-1"], "--max-calls",
     "a whole number >= 0"),
    (["compare", "c.yaml", "--samples", "0"], "--samples", "a positive integer"),
    (["compare", "c.yaml", "--seed", "-1"], "--seed", "a whole number >= 0"),
    (["report", "c.yaml", "--seed", "-1"], "--seed", "a whole number >= 0"),
]


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("argv", "option", "must"), REFUSED,
                         ids=[" ".join(argv[:1] + argv[2:]) if argv[0] != "pool" else
                              " ".join(argv[:2] + argv[3:]) for argv, _, _ in REFUSED])
def test_a_count_out_of_its_range_is_a_usage_error(argv, option, must, capsys):
    with pytest.raises(SystemExit) as refused:  # before any file is read
        cli.main(argv)
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert f"error: argument {option}: must be {must}" in err and "Traceback" not in err


# ---- a stale leaderboard ------------------------------------------------------------------


@pytest.fixture
def campaign(tmp_path, capsys):
    config = make_campaign(tmp_path, systems=4, topics=5)
    assert cli.main(["run", "--workers", "1", str(config)]) == 0
    assert cli.main(["compare-qrels", str(config), "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "shallow against official" in out and "top 3: " in out
    return config


@pytest.mark.timeout(120)
@pytest.mark.parametrize("changed", ["official", "shallow"])
def test_a_qrels_file_changed_after_the_run_is_not_mixed_with_its_stale_leaderboard(
        campaign, capsys, changed):
    path = campaign.parent.parent / "runs" / {"official": "qrels.txt",
                                              "shallow": "shallow.txt"}[changed]
    with path.open("a") as fh:  # a new judgment: these labels were never scored
        fh.write("t01 0 t01-D9999 1\n")
    assert cli.main(["compare-qrels", str(campaign)]) == NotStoredError.exit_code
    captured = capsys.readouterr()
    assert captured.out == ""
    assert (f"irbench: error: qrels set '{changed}' ({path}) changed since the scores were "
            f"stored: run 'irbench run {campaign}' first") in captured.err
    # scored again: the comparison is made, from the labels that were scored
    assert cli.main(["run", "--workers", "1", str(campaign)]) == 0
    assert cli.main(["compare-qrels", str(campaign)]) == 0
    assert "shallow against official" in capsys.readouterr().out


@pytest.mark.timeout(120)
def test_a_qrels_set_that_failed_at_the_last_run_is_named(campaign, capsys):
    shallow = campaign.parent.parent / "runs" / "shallow.txt"
    shallow.write_text("t01 0 only-three-fields\n")
    assert cli.main(["run", "--workers", "1", str(campaign)]) != 0
    capsys.readouterr()
    assert cli.main(["compare-qrels", str(campaign)]) == NotStoredError.exit_code
    err = capsys.readouterr().err
    assert "the store holds no current scores on qrels set 'shallow' (its last 'irbench run' " \
           "failed: " in err and f"run 'irbench run {campaign}' first" in err
