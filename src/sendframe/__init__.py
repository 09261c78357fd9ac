"""sendframe: messaging campaigns from pandas DataFrames.

    >>> import sendframe
    >>> sendframe.sms_parts("Hello {name}!")
    1

Public names are imported lazily, so ``import sendframe`` stays fast and the optional
notebook stack (plotly, ipywidgets) is only needed by the functions that draw.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "Message": "sendframe.campaign.message",
    "Variants": "sendframe.campaign.experiment",
    "variants": "sendframe.campaign.experiment",
    "message": "sendframe.campaign.message",
    "sms": "sendframe.campaign.message",
    "mailing": "sendframe.campaign.message",
    "voice": "sendframe.campaign.message",
    "voice_audio": "sendframe.campaign.message",
    "landing_sms": "sendframe.campaign.message",
    "whatsapp": "sendframe.campaign.message",
    "ApiError": "sendframe.errors",
    "AuthenticationError": "sendframe.errors",
    "CampaignStoppedWarning": "sendframe.errors",
    "ConfigurationError": "sendframe.errors",
    "ErrorCode": "sendframe.errors",
    "InputError": "sendframe.errors",
    "LedgerInUseError": "sendframe.errors",
    "LedgerMismatchError": "sendframe.errors",
    "MissingVariableError": "sendframe.errors",
    "NotFoundError": "sendframe.errors",
    "NotSentError": "sendframe.errors",
    "Problem": "sendframe.errors",
    "RequestValidationError": "sendframe.errors",
    "SendframeError": "sendframe.errors",
    "SendframeWarning": "sendframe.errors",
    "RowsSkippedWarning": "sendframe.errors",
    "TemplateError": "sendframe.errors",
    "UnknownOptionError": "sendframe.errors",
    "UnknownOutcomeError": "sendframe.errors",
    "Sandbox": "sendframe.sandbox.server",
    "AsyncClient": "sendframe.api.client",
    "Client": "sendframe.api.client",
    "Composer": "sendframe.notebook.widgets",
    "Ledger": "sendframe.campaign.ledger",
    "Monitor": "sendframe.notebook.widgets",
    "Receiver": "sendframe.delivery.receiver",
    "cheapest_encoding": "sendframe.text.encodings",
    "dashboard": "sendframe.notebook.charts",
    "delivery_summary": "sendframe.delivery.metrics",
    "estimate": "sendframe.campaign.estimate",
    "estimate_totals": "sendframe.campaign.estimate",
    "latest_status": "sendframe.delivery.callbacks",
    "message_outcomes": "sendframe.delivery.outcomes",
    "outcomes": "sendframe.delivery.outcomes",
    "MessageCounter": "sendframe.campaign.counter",
    "send_campaign": "sendframe.campaign.shortcuts",
    "fetch_records": "sendframe.delivery.records",
    "preflight": "sendframe.campaign.preflight",
    "problem_counts": "sendframe.scale.frames",
    "read_callbacks": "sendframe.delivery.callbacks",
    "read_contacts": "sendframe.campaign.contacts",
    "render": "sendframe.campaign.preview",
    "send_landingsms": "sendframe.campaign.shortcuts",
    "send_mailing": "sendframe.campaign.shortcuts",
    "send_sms": "sendframe.campaign.shortcuts",
    "send_voice": "sendframe.campaign.shortcuts",
    "send_voice_audio": "sendframe.campaign.shortcuts",
    "send_whatsapp": "sendframe.campaign.shortcuts",
    "sms_parts": "sendframe.text.parts",
    "sms_parts_series": "sendframe.text.parts",
    "unencodable_characters": "sendframe.text.encodings",
    # campaign design (issue 13): variants, their comparison, local-time schedules
    "assign_variants": "sendframe.campaign.variants",
    "compare_variants": "sendframe.delivery.experiments",
    "local_send_times": "sendframe.campaign.schedule",
    "variant_chart": "sendframe.notebook.experiment_charts",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'sendframe' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
