"""The words of a send result: every outcome a row may end with, and the reasons a send skips a row.

The send policy (:mod:`sendframe.campaign.policy`) decides which rows get which outcome; the delivery
tables (:mod:`sendframe.delivery.outcomes`) read results written in these words. Both import them
from here, at the bottom of the layering, so neither part imports the other for them.

    >>> SKIP_OUTCOMES["duplicate"], OUTCOMES[:2]
    ('skipped_duplicate', ('accepted', 'rejected'))

Next to :mod:`sendframe.errors` at the bottom of the layering: it imports nothing of sendframe.
"""

from __future__ import annotations

__all__ = ["OUTCOMES", "SKIP_OUTCOMES"]

# reason -> outcome, in the order a row's first reason is taken
SKIP_OUTCOMES: dict[str, str] = {
    "invalid": "skipped_invalid",
    "landline": "skipped_landline",
    "suppressed": "skipped_suppressed",
    "frequency": "skipped_frequency",
    "preflight": "skipped_preflight",
    "duplicate": "skipped_duplicate",
}
# every outcome a send result may hold (an ordered categorical with these categories)
OUTCOMES: tuple[str, ...] = ("accepted", "rejected", "unknown", "not_sent", "dry_run", *SKIP_OUTCOMES.values(),
                             "holdout")
