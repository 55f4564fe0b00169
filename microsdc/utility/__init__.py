"""Information loss (utility) measures for numeric and categorical microdata.

One module per idea:

* :mod:`~microsdc.utility._distance`: MAE, MSE, IL1 (mean variation), IL1s;
* :mod:`~microsdc.utility._rank`: bounded rank measures brMAE and brMSE (Chaibub Neto);
* :mod:`~microsdc.utility._matrix`: matrix discrepancies on X, V, R, RF, C, F (Table 1 of
  Mateo-Sanz, Domingo-Ferrer and Sebe 2005) and the X-bar and S variants;
* :mod:`~microsdc.utility._probabilistic`: probabilistic information loss, PIL (same paper,
  section 4);
* :mod:`~microsdc.utility._eigen`: eigenvalue comparison (sdcMicro's ``eigen``, ``robeigen``);
* :mod:`~microsdc.utility._robust`: the robust covariance behind ``robeigen`` (FAST-MCD);
* :mod:`~microsdc.utility._categorical`: missing values, changed records, CTBIL;
* :mod:`~microsdc.utility._benchmark`: Gini coefficient and regression coefficients with
  confidence intervals before and after protection;
* :mod:`~microsdc.utility._report`: :func:`information_loss`, all numeric measures at once.

Conventions: measures average over the n*p cells unless their docstring says otherwise;
``reduce="sum"`` gives sdcMicro's sums; standard deviations are sample (n - 1) ones except
in PIL, which uses the paper's population moments; random choices take ``seed``.
"""

from microsdc.utility._benchmark import (
    GiniComparison,
    RegressionComparison,
    ci_overlap,
    gini,
    gini_comparison,
    regression_comparison,
)
from microsdc.utility._categorical import CTBILResult, ctbil, missing_values, records_changed
from microsdc.utility._distance import il1, il1_excluded_cells, il1s, mae, mse
from microsdc.utility._eigen import eigen_discrepancy, eigenvalues
from microsdc.utility._matrix import DISCREPANCIES, MATRICES, matrix_discrepancy
from microsdc.utility._probabilistic import (
    PIL_QUANTILES,
    PILResult,
    pil_correlation,
    pil_covariance,
    pil_mean,
    pil_quantiles,
    pil_variance,
    probabilistic_information_loss,
)
from microsdc.utility._rank import TIES, brmae, brmse, rank_distance_bound, ranks
from microsdc.utility._report import UtilityReport, information_loss
from microsdc.utility._robust import MCDEstimate, mcd

__all__ = [
    "mae",
    "mse",
    "il1",
    "il1s",
    "il1_excluded_cells",
    "TIES",
    "ranks",
    "rank_distance_bound",
    "brmae",
    "brmse",
    "MATRICES",
    "DISCREPANCIES",
    "matrix_discrepancy",
    "PIL_QUANTILES",
    "PILResult",
    "probabilistic_information_loss",
    "pil_quantiles",
    "pil_mean",
    "pil_variance",
    "pil_covariance",
    "pil_correlation",
    "eigenvalues",
    "eigen_discrepancy",
    "MCDEstimate",
    "mcd",
    "missing_values",
    "records_changed",
    "CTBILResult",
    "ctbil",
    "ci_overlap",
    "gini",
    "GiniComparison",
    "gini_comparison",
    "RegressionComparison",
    "regression_comparison",
    "UtilityReport",
    "information_loss",
]
