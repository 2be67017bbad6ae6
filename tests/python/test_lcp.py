"""complan.lcp against analytic answers and the CLI's JSON (bit for bit:
the CLI prints 17 significant digits, which round-trip a double)."""
import glob
import os

import numpy as np
import pytest

import complan
from conftest import no_rss_under_sanitizers, DATA, cli_json, rss_bytes

FILES = sorted(f for f in glob.glob(os.path.join(DATA, "siconos", "*.dat"))
               + glob.glob(os.path.join(DATA, "lcp", "*.json"))
               if "_block" not in f)
CLI_STATUS = {"solved": "solved", "no solution": "no_solution"}


def test_analytic_2x2():
    # M = I, q = (-1, 2): z = (1, 0), w = (0, 2), the only solution.
    r = complan.lcp.solve(np.eye(2), [-1.0, 2.0])
    assert r.status == "solved" and r.solved
    assert r.z.dtype == np.float64 and r.z.shape == (2,) and r.w.shape == (2,)
    assert r.z.tolist() == [1.0, 0.0] and r.w.tolist() == [0.0, 2.0]
    assert r.residuals["complementarity"] == 0.0
    assert set(r.residuals) == {"complementarity", "residual", "min_z", "min_w"}


def test_fip_poll_fields_mirrored_and_unset():
    # cp_fip_options ends with the poll hook (a function pointer and its
    # context): mirrored as plain pointers, NULL in the library's defaults.
    from complan import _lib
    o = _lib.solve_defaults()
    names = [f[0] for f in _lib.CFipOptions._fields_]
    assert names[-2:] == ["poll", "poll_ctx"]
    assert o.fip.poll is None and o.fip.poll_ctx is None
    assert _lib.CFipOptions.poll.offset > _lib.CFipOptions.check.offset


@pytest.mark.parametrize("solver", ["lemke", "fip", "certify", "auto"])
def test_each_solver_on_a_psd_problem(solver):
    # M symmetric positive definite: unique solution, checked independently.
    rng = np.random.default_rng(5)
    A = rng.standard_normal((6, 6))
    M = A @ A.T + 6 * np.eye(6)
    q = rng.standard_normal(6)
    r = complan.lcp.solve(M, q, solver=solver)
    assert r.solved, r.reason
    assert r.solver == solver or solver == "auto"
    assert (r.z >= -1e-12).all() and (r.w >= -1e-9).all()
    np.testing.assert_allclose(r.w, M @ r.z + q, atol=1e-9)
    assert abs(r.z @ r.w) < 1e-9


def test_order_of_M_does_not_matter():
    M = np.array([[2.0, 1.0], [0.5, 3.0]])
    q = np.array([-1.0, -1.0])
    a = complan.lcp.solve(M, q)
    b = complan.lcp.solve(np.asfortranarray(M), q)
    assert np.array_equal(a.z, b.z)
    np.testing.assert_allclose(M @ a.z + q, 0, atol=1e-15)


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_solve_equals_cli(path):
    doc, _ = cli_json("lcp", "solve", path)
    p = complan.lcp.load(path)
    assert p.M.shape == (p.n, p.n) and p.q.shape == (p.n,) and p.M.dtype == np.float64
    r = p.solve()
    assert CLI_STATUS.get(r.status, "failed") == doc["status"]
    assert r.solver == doc["solver"] and r.iterations == doc["iterations"]
    assert r.starts == doc["starts"]
    if doc["z"] is None:
        assert r.z is None and r.w is None
    else:
        assert np.array_equal(r.z, np.array(doc["z"], dtype=np.float64))
        assert np.array_equal(r.w, np.array(doc["w"], dtype=np.float64))
        assert r.residuals["residual"] == doc["residual"]
        assert r.polished == doc["polished"]
    # the whole document, but for the measured time
    d = r.document()
    assert d["time_us"] > 0 and doc["time_us"] > 0
    d["time_us"] = doc["time_us"]
    assert d == doc


@pytest.mark.parametrize("name", ["lcp_CPS_4.dat", "lcp_Pang_isolated_sol_perturbed.dat"])
def test_certify_equals_cli(name):
    path = os.path.join(DATA, "siconos", name)
    doc, _ = cli_json("lcp", "certify", "--second", path)
    r = complan.lcp.load(path).certify(second=True)
    assert CLI_STATUS.get(r.status, "failed") == doc["status"]
    assert r.alpha == doc["alpha"]
    if doc["z"] is not None:
        assert np.array_equal(r.z, np.array(doc["z"]))
        assert (r.second is None) == (doc["second"] is None)
        if r.second is not None:
            assert np.array_equal(r.second[0], np.array(doc["second"]["z"]))
        assert r.second_decided == doc["second_decided"]
    else:
        assert r.status == "no solution" and r.z is None
    d = r.document()
    d["time_us"] = doc["time_us"]
    assert d == doc
    # without --second: no second keys
    doc, _ = cli_json("lcp", "certify", path)
    d = complan.lcp.load(path).certify().document()
    d["time_us"] = doc["time_us"]
    assert d == doc and "second" not in d


def test_repeat_solves_again_and_times_one_solve():
    """repeat (`--repeat`): the same answer, time_us the mean of one solve."""
    p = complan.lcp.load(os.path.join(DATA, "siconos", "lcp_exp_murty2.dat"))
    one, many = p.solve("lemke"), p.solve("lemke", repeat=50)
    assert np.array_equal(one.z, many.z) and one.iterations == many.iterations
    assert many.time_us > 0 and many.document()["time_us"] == many.time_us
    assert p.certify(repeat=2).solved
    for bad in (0, 1000001, 2.5, "3"):
        with pytest.raises(complan.Error, match="repeat"):
            p.solve(repeat=bad)


def test_options_reach_the_solver():
    # Murty's exponential example needs 64 pivots: a cap of 10 without
    # restarts stops Lemke.
    p = complan.lcp.load(os.path.join(DATA, "siconos", "lcp_exp_murty2.dat"))
    assert p.solve("lemke").iterations == 64
    r = p.solve("lemke", lemke={"max_pivots": 10, "restarts": 0, "rescue": 0})
    assert r.status == "pivot cap" and r.z is None and not r.solved


def test_load_errors_name_file_and_place(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"M": [[1, 2], [3]], "q": [1, 2]}')
    with pytest.raises(complan.Error) as e:
        complan.lcp.load(bad)
    assert e.value.code == "input" and e.value.path == str(bad)
    assert "M[1]" in e.value.where and str(bad) in str(e.value)
    with pytest.raises(complan.Error) as e:
        complan.lcp.load(tmp_path / "missing.dat")
    assert "missing.dat" in e.value.message and e.value.code == "io"
    block = os.path.join(DATA, "siconos", "lcp_ortiz_block.dat")
    with pytest.raises(complan.Error) as e:
        complan.lcp.load(block)
    assert e.value.where == "line 2" and "storage type 1" in e.value.message


def test_bad_arguments_raise():
    with pytest.raises(complan.Error, match="square"):
        complan.lcp.solve(np.ones((2, 3)), [1, 1])
    with pytest.raises(complan.Error, match=r"shape \(2,\)"):
        complan.lcp.solve(np.eye(2), [1, 1, 1])
    with pytest.raises(complan.Error, match=r"M\[1, 0\]"):
        complan.lcp.solve([[1, 0], [np.nan, 1]], [1, 1])
    with pytest.raises(complan.Error, match="unknown solver"):
        complan.lcp.solve(np.eye(2), [1, 1], solver="simplex")
    with pytest.raises(complan.Error, match="unknown option 'max_pivot'"):
        complan.lcp.solve(np.eye(2), [1, 1], lemke={"max_pivot": 3})
    with pytest.raises(complan.Error, match="tol"):
        complan.lcp.solve(np.eye(2), [1, 1], tol=2.0)


def test_parse_text():
    p = complan.lcp.parse('{"M": [[1, 2], [3, 4]], "q": [5, 6], "name": "t"}')
    # the file is row-major: M[0, 1] is 2
    assert p.M.tolist() == [[1, 2], [3, 4]] and p.q.tolist() == [5, 6] and p.name == "t"


@no_rss_under_sanitizers
def test_repeated_solves_keep_rss_flat():
    M = np.array([[2.0, 1.0], [1.0, 2.0]])
    q = np.array([-1.0, -1.0])
    for _ in range(2000):
        complan.lcp.solve(M, q, solver="lemke")
    before = rss_bytes()
    for _ in range(100000):
        complan.lcp.solve(M, q, solver="lemke")
    grown = rss_bytes() - before
    # 10^5 calls: a leak of even 16 bytes a call would show as 1.6 MB.
    assert grown < 1 << 20, "RSS grew by %d bytes over 10^5 solves" % grown


def test_classic_pass_option_reaches_the_solver():
    # Lemke's classic pass is on as in `complan lcp solve`: with a cap of
    # 10 and no restarts it adds one start after the ordinary one; off, one
    # start; alone (2), its one start.
    p = complan.lcp.load(os.path.join(DATA, "siconos", "lcp_exp_murty2.dat"))
    base = {"max_pivots": 10, "restarts": 0, "rescue": 0}
    assert p.solve("lemke", lemke=dict(base, classic=0)).starts == 1
    r = p.solve("lemke", lemke=base)
    assert r.status == "pivot cap" and r.starts == 2
    assert p.solve("lemke", lemke=dict(base, classic=2)).starts == 1
