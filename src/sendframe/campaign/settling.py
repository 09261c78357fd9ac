"""Unknown outcomes settled by delivery notifications.

A send with a notificationUrl gives each sms recipient its own URL, carrying a tag of the row
(:func:`sendframe.campaign.ledger_keys.row_tag` in the ``sf_row`` parameter). A notification only exists
for a message the service accepted, so when a batch ends unknown (the process was killed, a
timeout, a 5xx, a connection dropped after the service processed it), a later run given the
notifications marks every row whose tag came back as accepted, with the message id of ``%i``, and
never sends it again. Rows of unknown batches that no notification names after
:data:`GRACE` are probably not sent; they are listed, and sent again only with ``resend_unknown=True``.

    >>> import pandas as pd
    >>> tags_from_callbacks(pd.DataFrame({"id": ["m1", "m1"], "sf_row": ["t1", "t1"]}), None)
    {'t1': 'm1'}
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

import pandas as pd

from sendframe.campaign.ledger_keys import ROW_TAG_PARAM, tag_url
from sendframe.delivery.callbacks import read_callbacks
from sendframe.errors import InputError

__all__ = ["GRACE", "tags_from_callbacks"]

GRACE = timedelta(minutes=10)
"""How long after its request a row's first notification (ACCEPTD at the latest) is expected."""


def tags_from_callbacks(callbacks: Any, notification_url: str | None) -> dict[str, str]:
    """``{row tag: message id}`` from a callbacks frame, a log path or a ``Receiver``.

    A log (or a Receiver's log) is read with the message's ``notification_url`` plus the tag
    parameter, so the tag becomes a column.
    """
    if callbacks is None:
        return {}
    if isinstance(callbacks, pd.DataFrame):
        frame = callbacks
    elif isinstance(callbacks, (str, os.PathLike)) or hasattr(callbacks, "log"):
        path = callbacks.log if hasattr(callbacks, "log") else callbacks
        if not notification_url or not notification_url.startswith(("http://", "https://")):
            raise InputError("callbacks= settles unknown rows from their notifications, so the message needs the "
                             "notification_url the send used.")
        frame = read_callbacks(path, notification_url=f"{tag_url(notification_url)}tag")
    else:
        raise InputError(f"callbacks= takes a Receiver, a callback log path or a callbacks frame, "
                         f"not {type(callbacks).__name__}.")
    if ROW_TAG_PARAM not in frame.columns or "id" not in frame.columns:
        raise InputError(f"The callbacks have no {ROW_TAG_PARAM!r} and 'id' columns, so no notification names a row: "
                         "read the log with the notificationUrl the send used, or pass the Receiver or log path.")
    found = frame[[ROW_TAG_PARAM, "id"]].dropna().drop_duplicates(ROW_TAG_PARAM)
    return dict(zip(found[ROW_TAG_PARAM].astype(str), found["id"].astype(str), strict=True))
