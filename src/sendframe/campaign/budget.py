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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sendframe.errors import InputError

__all__ = ["Budget"]


@dataclass
class Budget:
    """A cap on the estimated spend of one campaign, and what is spent so far."""

    cap: float
    row_costs: Sequence[float]
    spent: float = 0.0
    reached: bool = False
    left_out: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if isinstance(self.cap, bool) or not isinstance(self.cap, (int, float)) or self.cap < 0:
            raise InputError("max_cost must be a number of at least 0 (in the price table's currency), "
                             f"got {self.cap!r}.")

    def start(self, row_costs: Sequence[float]) -> None:
        """Begin a run over rows with these estimated costs (the spend so far is kept)."""
        self.row_costs = list(row_costs)
        self.left_out = []
        self.reached = False

    def count(self, positions: Iterable[int]) -> None:
        """Add rows already spent on (by an earlier run)."""
        self.spent += sum(self.row_costs[i] for i in positions)

    def take(self, positions: Sequence[int]) -> bool:
        """Whether a batch of ``positions`` may start; if so its cost is counted as spent."""
        cost = sum(self.row_costs[i] for i in positions)
        if self.reached or self.spent + cost > self.cap + 1e-9:
            self.reached = True
            self.left_out.extend(positions)
            return False
        self.spent += cost
        return True

    def reason(self, currency: str = "") -> str:
        """Why a row was left out, for the result's ``reason`` column."""
        unit = f" {currency}" if currency else ""
        return (f"not sent: the next batch would take the estimated spend above max_cost={self.cap:g}{unit} "
                f"(spent {self.spent:.4f}{unit}); run again with a higher max_cost to continue.")
