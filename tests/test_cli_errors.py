"""Named errors: each carries its exit status and survives pickling (worker processes send
them back whole)."""

from __future__ import annotations

import inspect
import pickle

import pytest

from irbench import cli, errors

CLASSES = sorted((cls for _, cls in inspect.getmembers(errors, inspect.isclass)
                  if issubclass(cls, errors.IrbenchError)), key=lambda cls: cls.__name__)

# trec_eval's statuses where it has one (1 usage, 2 input, 4 cannot evaluate); 3 a busy store
EXIT = {"FormatError": 2, "AnswerFormatError": 2, "ConfigError": 2, "JudgmentError": 2,
        "MeasureParameterError": 2, "DuplicateError": 4, "EvaluationError": 4, "StoreError": 3,
        "StoreValueError": 3}


def _example(cls):
    if issubclass(cls, errors.FormatError):
        return cls([f"f{i}.txt:{i}: bad line" for i in range(25)], more=3)
    return cls(f"{cls.__name__}: something is wrong")


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_error_pickles_whole(cls):
    error = _example(cls)
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is cls and str(back) == str(error)
    if isinstance(error, errors.FormatError):
        assert back.problems == error.problems and back.more == error.more


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_error_carries_its_exit_status(cls):
    assert cls.exit_code == EXIT.get(cls.__name__, 1)


def test_the_command_line_exits_with_the_errors_status(tmp_path, capsys):
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 d1 1 1.0 t\n1 Q0 d1 2 0.5 t\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 1\n")
    assert cli.main(["eval", str(qrels), str(run)]) == errors.DuplicateError.exit_code
    assert "irbench: error:" in capsys.readouterr().err
