"""The budget cap of a send: no batch starts that would take the estimated spend above ``max_cost``.

The spend counted is the estimated cost (:meth:`sendframe.Message.estimate`) of the rows the ledger
already holds as accepted or unknown (an unknown row may have been sent: it is counted, to stay
under the cap), plus every batch started in this run. Batches start in order; once one does not
fit, no later batch starts, so a run with a higher cap continues with the same rows first.

    >>> budget = Budget(10.0, [3.0, 3.0, 3.0, 3.0])
    >>> budget.take([0, 1]), budget.take([2, 3]), budget.spent
    (True, False, 6.0)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from sendframe.errors import InputError

__all__ = ["Budget"]


@dataclass
class Budget:
    """A cap on the estimated spend of one campaign, and what is spent so far."""

    cap: float
    row_costs: npt.ArrayLike
    spent: float = 0.0
    reached: bool = False
    left_out: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.row_costs = np.asarray(self.row_costs, dtype=np.float64)
        if isinstance(self.cap, bool) or not isinstance(self.cap, (int, float)) or self.cap < 0:
            raise InputError("max_cost must be a number of at least 0 (in the price table's currency), "
                             f"got {self.cap!r}.")

    def start(self, row_costs: npt.ArrayLike) -> None:
        """Begin a run over rows with these estimated costs (the spend so far is kept)."""
        self.row_costs = np.asarray(row_costs, dtype=np.float64)
        self.left_out = []
        self.reached = False

    def _cost(self, positions: Iterable[int]) -> float:
        return float(np.asarray(self.row_costs)[np.fromiter(positions, np.int64)].sum())

    def count(self, positions: Iterable[int]) -> None:
        """Add rows already spent on (by an earlier run)."""
        self.spent += self._cost(positions)

    def take(self, positions: Iterable[int]) -> bool:
        """Whether a batch of ``positions`` may start; if so its cost is counted as spent."""
        cost = self._cost(positions)
        if self.reached or self.spent + cost > self.cap + 1e-9:
            self.reached = True
            self.left_out.extend(map(int, positions))
            return False
        self.spent += cost
        return True

    def reason(self, currency: str = "") -> str:
        """Why a row was left out, for the result's ``reason`` column."""
        unit = f" {currency}" if currency else ""
        return (f"not sent: the next batch would take the estimated spend above max_cost={self.cap:g}{unit} "
                f"(spent {self.spent:.4f}{unit}); run again with a higher max_cost to continue.")
