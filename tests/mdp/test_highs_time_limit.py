"""Every HiGHS call of the exact LP solvers stops at a time limit and is reported, never hangs.

The CMDP below (S = 3, A = 2, two constraints, γ = 1 − 2^-34, budgets of order 2^34) kept HiGHS's
dual simplex busy for over ten minutes in ``solve_cmdp``'s first LP, deaf to SIGINT (found by a
bug hunt of the constrained layer). With the limit HiGHS stops with scipy status 1 ("Time limit
reached"), which ``solve_cmdp`` reports as a ``SolverError``. The run happens in a subprocess, so
that a hang fails the test instead of stalling the suite; whether HiGHS hangs on this LP depends
on its version, so a certified answer within the limit passes as well.
"""

import subprocess
import sys
import textwrap

from rltheory._numerics import HIGHS_OPTIONS, HIGHS_TIME_LIMIT

_SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import rltheory._numerics as nm
    nm.HIGHS_OPTIONS["time_limit"] = 3.0
    from rltheory.errors import SolverError
    from rltheory.mdp import FiniteMDP
    from rltheory.mdp.cmdp_model import ConstrainedMDP
    from rltheory.mdp.constrained import solve_cmdp
    P = np.array([[[1, 0, 0], [0, 0, 1]], [[.4, .6, 0], [.75, 0, .25]], [[1, 0, 0], [.25, .75, 0]]], float)
    R = np.array([[.75, -1], [.75, -1], [-.5, -1]])
    C = np.array([[[.75, .75], [0, .25], [.25, .75]], [[.25, .75], [0, 0], [.25, 0]]])
    mdp = FiniteMDP(P, R, 1 - 2.0**-34, mu=np.array([0, .5, .5]))
    try:
        solve_cmdp(ConstrainedMDP(mdp, C=C, b=np.array([0.5, 2.0]) * 2.0**34))
        print("solved")
    except SolverError as e:
        print("SolverError", e)
    """
)


def test_the_limit_is_part_of_every_highs_call():
    assert HIGHS_OPTIONS["time_limit"] == HIGHS_TIME_LIMIT == 300.0


def test_a_hanging_cmdp_lp_is_stopped_and_reported():
    # limit 3 s per call; at most a handful of calls (retries), so 60 s means it did not stop
    out = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip().splitlines()[-1]
    assert line == "solved" or ("SolverError" in line and "Time limit reached" in line), line
