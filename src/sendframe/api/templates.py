"""The sandbox's built-in WhatsApp templates and how many positional fields each one needs.

One table, read by the toolkit's preflight and (when it wants) the sandbox, so both agree on what
a complete message is. Each entry is ``(header, body, call_to_action)`` field counts.

    >>> WHATSAPP_TEMPLATES[1003]
    (1, 2, 1)
    >>> whatsapp_field_counts(1002)
    {'headerFields': 0, 'bodyFields': 1, 'callToActionFields': 0}
"""

from __future__ import annotations

from sendframe.channels import channel

__all__ = ["WHATSAPP_FIELDS", "WHATSAPP_TEMPLATES", "whatsapp_field_counts"]

# templateId -> (header fields, body fields, call-to-action fields)
WHATSAPP_TEMPLATES: dict[int, tuple[int, int, int]] = {
    1001: (0, 0, 0),  # no variables
    1002: (0, 1, 0),  # one body variable
    1003: (1, 2, 1),  # one header, two body, one button variable
}

# wire names of the three positional arrays, in the order of the tuples above: the column-filled arrays but the
# default answer (channels.py's table)
WHATSAPP_FIELDS: tuple[str, ...] = tuple(dict.fromkeys(
    wire for _, wire in channel("whatsapp").column_fields if wire != "defaultAnswer"))


def whatsapp_field_counts(template_id: int) -> dict[str, int]:
    """The number of fields each positional array needs for ``template_id``.

    Raises ``KeyError`` for a template the table does not know.

        >>> whatsapp_field_counts(1001)
        {'headerFields': 0, 'bodyFields': 0, 'callToActionFields': 0}
    """
    return dict(zip(WHATSAPP_FIELDS, WHATSAPP_TEMPLATES[template_id], strict=True))
