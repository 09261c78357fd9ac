"""A realistic per-recipient outcomes frame of any size, shaped like ``message_outcomes`` returns.

    frame = realistic_outcomes(1_000_000)                 # the columns of OUTCOME_COLUMNS
    frame = realistic_outcomes(1_000_000, extras=True)    # plus text/variant and skipped_* / holdout rows

What a real campaign looks like: about 45 countries (a few big ones and a long tail), 2-5 operators
each, one unique recipient and message id per row, a 45-minute send window, log-normal delivery
times with a long tail, 1-3 parts, the price of the recipient's country, a few percent of
failures with their API errors, clicks on about 6% of delivered messages. Statuses are an ordered
categorical and timestamps tz-aware UTC, as in ``sendframe.delivery.outcomes``. Used by
``bench_dashboard.py`` and the dashboard's size test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sendframe.delivery.outcomes import OUTCOME_COLUMNS, OUTCOME_STATUSES

# country, share of recipients, calling code, SMS price per part (data/prices.csv where listed)
_COUNTRIES: tuple[tuple[str, float, str, float], ...] = (
    ("ES", 30.0, "34", 0.045), ("GB", 11.0, "44", 0.040), ("PT", 9.0, "351", 0.039), ("FR", 8.0, "33", 0.065),
    ("DE", 7.0, "49", 0.075), ("IT", 6.0, "39", 0.060), ("US", 5.0, "1", 0.009), ("MX", 4.0, "52", 0.035),
    ("BR", 4.0, "55", 0.028), ("NL", 3.0, "31", 0.080), ("AR", 2.0, "54", 0.050), ("CO", 2.0, "57", 0.015),
    ("CA", 1.5, "1", 0.0095),
    *((code, 0.22, "99", 0.090) for code in (
        "IE", "BE", "CH", "AT", "PL", "SE", "NO", "DK", "FI", "GR", "RO", "HU", "CZ", "MA", "ZA", "IN", "PH",
        "AU", "NZ", "JP", "CL", "PE", "UY", "EC", "VE", "TR", "IL", "AE", "SA", "EG", "NG", "KE")),
)
_ACCEPTED_STATUSES = (("DELIVRD", 88.0), ("PENDING", 3.0), ("UNDELIV", 4.0), ("EXPIRED", 2.0), ("REJECTD", 2.5),
                      ("DELETED", 0.5))
_OUTCOMES = (("accepted", 97.9), ("rejected", 1.5), ("unknown", 0.1), ("not_sent", 0.5))
_EXTRA_OUTCOMES = (("skipped_invalid", 1.2), ("skipped_duplicate", 0.6), ("skipped_suppressed", 0.3), ("holdout", 2.0))
_API_ERRORS = ((102, "not a valid phone number", 85.0), (108, "the recipient unsubscribed", 10.0),
               (105, "the message needs more parts than allowed", 5.0))


def _choice(rng: np.random.Generator, options: tuple, weights: list[float], n: int) -> np.ndarray:
    p = np.asarray(weights, dtype=float)
    return rng.choice(np.asarray(options, dtype=object), size=n, p=p / p.sum())


def realistic_outcomes(n: int, *, seed: int = 7, extras: bool = False) -> pd.DataFrame:
    """``n`` rows of outcomes as ``message_outcomes`` returns them (``extras``: the columns and outcomes
    the send path may add: recipient text, variant, skipped_* and holdout rows).

    >>> frame = realistic_outcomes(1000)
    >>> frame["status"].cat.ordered, str(frame["sent_at"].dt.tz)
    (True, 'UTC')
    """
    rng = np.random.default_rng(seed)
    outcomes = _OUTCOMES + (_EXTRA_OUTCOMES if extras else ())
    outcome = _choice(rng, tuple(o for o, _ in outcomes), [w for _, w in outcomes], n)
    accepted = outcome == "accepted"

    which = rng.choice(len(_COUNTRIES), size=n, p=np.array([c[1] for c in _COUNTRIES]) / sum(c[1] for c in _COUNTRIES))
    codes = np.array([c[0] for c in _COUNTRIES], dtype=object)
    calling = np.array([c[2] for c in _COUNTRIES], dtype=object)
    prices = np.array([c[3] for c in _COUNTRIES])
    country = pd.array(codes[which], dtype="string")
    country[rng.random(n) < 0.002] = pd.NA  # numbers whose country nobody could tell
    # 2 to 5 operators per country, the first one the biggest
    operators = rng.integers(2, 6, size=len(_COUNTRIES))
    rank = np.minimum(rng.geometric(0.5, size=n) - 1, operators[which] - 1)
    mnc = pd.array(np.char.zfill((rank * 2 + 1).astype(str), 2), dtype="string")

    status = np.full(n, "PENDING", dtype=object)
    status[accepted] = _choice(rng, tuple(s for s, _ in _ACCEPTED_STATUSES), [w for _, w in _ACCEPTED_STATUSES],
                               int(accepted.sum()))
    status[np.isin(outcome, ["rejected", "not_sent"])] = "NOT_SENT"
    status[outcome == "unknown"] = "UNKNOWN_OUTCOME"
    attempted = accepted
    mnc[~attempted] = pd.NA

    error = np.full(n, -1)
    rejected = outcome == "rejected"
    error[rejected] = _choice(rng, tuple(e for e, _, _ in _API_ERRORS), [w for _, _, w in _API_ERRORS],
                              int(rejected.sum()))
    descriptions = {code: text for code, text, _ in _API_ERRORS}
    error_code = pd.array(np.where(error >= 0, error, 0), dtype="Int64")
    error_code[error < 0] = pd.NA

    start = pd.Timestamp("2026-11-21 09:00", tz="UTC")
    offsets = np.sort(rng.uniform(0, 45 * 60, size=n)).round()  # sent in index order over 45 minutes
    sent_at = pd.Series(start + pd.to_timedelta(offsets, unit="s")).astype("datetime64[us, UTC]")
    sent_at[~attempted] = pd.NaT
    seconds = np.exp(rng.normal(np.log(4.0), 1.3, size=n)).round(0)
    delivered = status == "DELIVRD"
    seconds_to_delivery = np.where(delivered, seconds, np.nan)
    delivered_at = sent_at + pd.to_timedelta(seconds_to_delivery, unit="s")

    parts = pd.array(_choice(rng, (1, 2, 3), [80, 18, 2], n).astype(int), dtype="Int64")
    not_priced = np.char.startswith(outcome.astype(str), "skipped") | (outcome == "holdout")
    estimated = np.where(not_priced, np.nan, prices[which] * parts.to_numpy(dtype=float, na_value=np.nan))
    final = attempted & (status != "PENDING")
    billed = np.where(final, estimated, np.nan)
    clicked = pd.array(delivered & (rng.random(n) < 0.06), dtype="boolean")

    ids = [f"{i:012x}{s:08x}" for i, s in zip(range(n), rng.integers(0, 2**32, n), strict=True)]
    numbers = pd.Series(np.arange(n) + 600_000_000).astype(str).to_numpy(dtype=object)
    frame = pd.DataFrame({
        "id": pd.array(ids, dtype="string"),
        "campaign_id": pd.array(np.full(n, 4711), dtype="Int64"),
        "sending_id": pd.array(90_000 + np.arange(n) // 1000, dtype="Int64"),
        "recipient": pd.array(calling[which] + numbers, dtype="string"),
        "country": country, "mnc": mnc, "outcome": pd.array(outcome, dtype="string"), "error_code": error_code,
        "error_description": pd.Series(error).map(descriptions).astype("string"),
        "status": pd.Categorical(status, categories=list(OUTCOME_STATUSES), ordered=True),
        "sent_at": sent_at, "delivered_at": delivered_at, "seconds_to_delivery": seconds_to_delivery,
        "clicked": clicked, "unsubscribed": pd.array(np.zeros(n, dtype=bool), dtype="boolean"), "parts": parts,
        "estimated_cost": estimated, "billed_cost": billed,
    })
    frame.loc[~accepted, "id"] = pd.NA
    frame = frame[list(OUTCOME_COLUMNS)]
    if extras:
        frame["variant"] = pd.array(_choice(rng, ("A", "B"), [1, 1], n), dtype="string")
        frame["text"] = ("Hi " + frame["recipient"].str[-4:] + ", your order ships today: https://s.example/"
                         + frame.index.astype(str))
    return frame
