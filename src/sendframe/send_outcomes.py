"""The words of a send result: every outcome a row may end with, and the reasons a send skips a row.

The send policy (:mod:`sendframe.campaign.policy`) decides which rows get which outcome; the delivery
tables (:mod:`sendframe.delivery.outcomes`) read results written in these words. Both import them
from here, at the bottom of the layering, so neither part imports the other for them.

    >>> SKIP_OUTCOMES["duplicate"], OUTCOMES[:2]
    ('skipped_duplicate', ('accepted', 'rejected'))
    >>> OUTCOME_LABELS["skipped_duplicate"], SKIP_LABELS["skipped_duplicate"]
    ('skipped: repeated recipient', 'repeated recipient')

Next to :mod:`sendframe.errors` at the bottom of the layering: it imports nothing of sendframe.
"""

from __future__ import annotations

__all__ = ["OUTCOMES", "OUTCOME_LABELS", "SKIPPED_OUTCOMES", "SKIP_LABELS", "SKIP_OUTCOMES"]

# reason -> outcome, in the order a row's first reason is taken
SKIP_OUTCOMES: dict[str, str] = {
    "invalid": "skipped_invalid",
    "landline": "skipped_landline",
    "suppressed": "skipped_suppressed",
    "frequency": "skipped_frequency",
    "preflight": "skipped_preflight",
    "duplicate": "skipped_duplicate",
}
# the outcomes of rows left out before sending: the send policy's skipped_* reasons, and a split test's holdout
SKIPPED_OUTCOMES: tuple[str, ...] = (*SKIP_OUTCOMES.values(), "holdout")
# every outcome a send result may hold (an ordered categorical with these categories)
OUTCOMES: tuple[str, ...] = ("accepted", "rejected", "unknown", "not_sent", "dry_run", *SKIPPED_OUTCOMES)
# what each skipped outcome is called on screen: why the row was left out
SKIP_LABELS: dict[str, str] = {
    "skipped_invalid": "invalid recipient",
    "skipped_landline": "landline",
    "skipped_suppressed": "suppressed",
    "skipped_frequency": "over the frequency cap",
    "skipped_preflight": "preflight error",
    "skipped_duplicate": "repeated recipient",
}
# how each outcome is named on screen (the Composer's status, the Monitor, the dashboard's funnel)
OUTCOME_LABELS: dict[str, str] = {
    "accepted": "accepted", "rejected": "rejected", "unknown": "unknown outcome", "not_sent": "not sent",
    "dry_run": "dry run", **{outcome: f"skipped: {label}" for outcome, label in SKIP_LABELS.items()},
    "holdout": "held out (control group)",
}
