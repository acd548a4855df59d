"""Why the public W-DBO and ``w-dbo-paper`` part ways at the first cleaning (a probe).

Replays the warm-up of a public-code run file through ``wdbo_algo.WDBOOptimizer`` (15 ``tell``
calls, its first fit) and prints, at the first ``clean``: the C++ criterion, tvbo's relevance
for the same data and hyperparameters, and how many points each cleaning rule keeps.

Found on Hartmann-3 seed 0 ([B] settings): the two criteria agree wherever the value is
resolved (1e-8 relative), but where the quadratic form is lost in cancellation the C++ returns
a -1 sentinel and tvbo clips to 0. The public loop then removes the sentinel points at no cost
even with the budget at its starting value 1 (``min_crit = 0 < budget = 1``), while tvbo's
``wdbo-budget`` needs ``budget > 1 + R``, false at 1. The public code also cleans at the 15th
observation (its first fit), tvbo's after the engine's warm-up (the 16th).

    python examples/wdbo_public/first_clean_probe.py RUN.nc
"""

from __future__ import annotations

import sys

import numpy as np


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: first_clean_probe.py RUN.nc (a w-dbo-public run file)", file=sys.stderr)
        return 2
    import gpytorch
    import torch
    import wdbo_criterion
    from wdbo_algo.optimizer import WDBOOptimizer

    from tvbo.algorithms.wdbo.relevance import relevance
    from tvbo.results.io import read_run

    torch.set_default_dtype(torch.float64)
    ds = read_run(args[0]).squeeze(("benchmark", "algorithm", "seed", "speed"))
    warm = int(ds["is_warmup"].values.sum())
    X = ds["x"].transpose("iteration", "dim").values[:warm]
    T = ds["t_sample"].values[:warm]
    y = ds["y"].values[:warm]
    now = float(ds["t_available"].values[warm - 1])
    d = X.shape[1]
    scale = 600.0
    opt = WDBOOptimizer(np.array([[0.0, 1.0]] * d), gpytorch.kernels.MaternKernel,
                        gpytorch.kernels.MaternKernel, [2.5], [1.5], n_initial_observations=warm)
    for i in range(warm):
        opt.tell(X[i], T[i] / scale, y[i])
    lam, ls, lt, noise = opt._lambda, opt._lS, opt._lT, opt._noise
    cpp = np.asarray(wdbo_criterion.wasserstein_criterion(
        np.ascontiguousarray(opt._xx_tt[:, :-1]), np.ascontiguousarray(opt._yy_normalized),
        np.ascontiguousarray(opt._xx_tt[:, -1]), warm, d, lam, noise,
        wdbo_criterion.MaternKernel(ls, 2.5), wdbo_criterion.MaternKernel(lt, 1.5),
        now / scale, 0, 1))
    ours = relevance(opt._xx_tt[:, :-1], opt._xx_tt[:, -1] * scale, opt._yy_normalized,
                     signal_var=lam, lengthscale_space=ls, lengthscale_time=lt * scale,
                     noise_var=noise, t_now=now)
    print(f"fit after {warm} observations: signal {lam:.4g}, l_S {ls:.4g}, "
          f"l_T {lt * scale:.4g} s, noise {noise:.4g}")
    print("C++ criterion (sorted):", np.array2string(np.sort(cpp), precision=6))
    print("tvbo relevance (sorted):", np.array2string(np.sort(ours), precision=6))
    resolved = cpp > 1e-6 * cpp.max()
    rel = np.max(np.abs(cpp[resolved] - ours[resolved]) / cpp[resolved])
    print(f"resolved values agree to {rel:.1e} relative; C++ sentinels (-1): "
          f"{int(np.sum(cpp == -1.0))}; tvbo exact zeros: {int(np.sum(ours == 0.0))}")
    print(f"tvbo's rule at budget 1 removes: {int(np.sum(1.0 > 1.0 + ours))} "
          "(needs budget > 1 + R)")
    opt.clean(now / scale)
    print(f"the public clean keeps {opt.dataset_size()} of {warm}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
