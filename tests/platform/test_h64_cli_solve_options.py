"""`rltheory solve gridworld`: a refused model parameter names the command-line option."""

from __future__ import annotations

import pytest

from rltheory.cli import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # the messages named gridworld's parameters ("size must be ..."), and for a wall on the
        # start cell "start[0] = (0, 0) is also a wall": a start that no option of solve sets
        (["--size", "0"], "rltheory solve: --size: size must be an integer >= 1; got 0"),
        (["--gamma", "1"], "rltheory solve: --gamma: gamma must lie in [0, 1); got 1.0"),
        (["--slip", "nan"], "rltheory solve: --slip: slip must lie in [0, 1]; got nan"),
        (["--wall", "3,3"], "rltheory solve: --wall: walls[0] = (3, 3) is off the 3x3 grid"),
        (
            ["--wall", "1,1", "--wall", "0,0"],
            "rltheory solve: --wall: start[0] = (0, 0) is also a wall (solve gridworld starts at "
            "(0, 0) and has its goal at (2, 2); neither may be a wall)",
        ),
        (
            ["--wall", "2,2"],
            "rltheory solve: --wall: goals[0] = (2, 2) is also a wall (solve gridworld starts at "
            "(0, 0) and has its goal at (2, 2); neither may be a wall)",
        ),
    ],
)
def test_a_refused_model_parameter_names_its_option(argv, message, capsys):
    assert main(["solve", "gridworld", "--size", "3", *argv]) == 2
    assert capsys.readouterr().err.strip() == message
