"""Lifetimes: plans keep their context alive or are refused after it is
closed, never a crash; create/destroy cycles do not grow memory."""
import gc
import os

import numpy as np
import pytest

import clphys


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_plan_keeps_context_alive(fp64):
    ctx = clphys.Context("")
    plan = clphys.GravityPlan(ctx, eps=0.1)
    del ctx
    gc.collect()
    acc, _ = plan.compute(np.eye(3), np.ones(3))
    assert np.isfinite(acc).all() and not plan.ctx.closed
    plan.close()
    plan.ctx.close()


def test_plan_refused_after_context_closed(fp64):
    with clphys.Context("") as ctx:
        g = clphys.GravityPlan(ctx, eps=0.1)
        lj = clphys.LJPlan(ctx, 27, (6.0, 6.0, 6.0), 2.5)
        pp = clphys.PoissonPlan.box(ctx, (2, 2, 2), (1.0, 1.0, 1.0))
    for plan, call in ((g, lambda: g.compute(np.eye(3), np.ones(3))),
                       (lj, lambda: lj.compute(np.zeros((27, 3)))),
                       (pp, lambda: pp.solve(np.zeros((2, 2, 2))))):
        assert plan.closed
        with pytest.raises(clphys.ClosedError):
            call()
        plan.close()  # closing again is harmless
    with pytest.raises(clphys.ClosedError):
        clphys.GravityPlan(ctx)


def test_cycles_collected_in_any_order(fp64):
    # a context and its plans in one reference cycle: the collector may
    # finalise them in any order; the C plans still go before the context
    for _ in range(5):
        ctx = clphys.Context("")
        box = {"ctx": ctx, "plans": [clphys.GravityPlan(ctx, eps=0.1) for _ in range(3)]}
        box["self"] = box
        ctx.cycle = box
        for p in box["plans"]:
            p.cycle = box
        del ctx, box, p
        gc.collect()


def test_thousand_plans_do_not_grow_memory(ctx, fp64):
    x, m = np.eye(3), np.ones(3)

    def cycle(k):
        for _ in range(k):
            with clphys.GravityPlan(ctx, eps=0.1) as plan:
                plan.compute(x, m)
    cycle(100)
    gc.collect()
    before = rss_bytes()
    cycle(1000)
    gc.collect()
    grown = rss_bytes() - before
    assert grown < 8 << 20, f"RSS grew {grown / 2**20:.1f} MiB over 1000 plans"


def test_contexts_do_not_grow_memory(fp64):
    def cycle(k):
        for _ in range(k):
            with clphys.Context("") as c:
                clphys.GravityPlan(c, eps=0.1)  # destroyed by the context's close
    cycle(10)
    gc.collect()
    before = rss_bytes()
    cycle(100)
    gc.collect()
    grown = rss_bytes() - before
    assert grown < 16 << 20, f"RSS grew {grown / 2**20:.1f} MiB over 100 contexts"


def test_gil_released_during_device_work(ctx, fp64):
    # a long C call in one thread; the main thread runs Python meanwhile
    import threading
    x = np.random.default_rng(1).uniform(-1, 1, (6000, 3))
    m = np.ones(6000)
    started = threading.Event()

    def work():
        started.set()
        clphys.gravity_accelerations(ctx, x, m, 0.01)
    t = threading.Thread(target=work)
    t.start()
    started.wait()
    spins = 0
    while t.is_alive():
        spins += 1
    t.join()
    assert spins > 10000, f"the main thread ran {spins} loop iterations during the call"
