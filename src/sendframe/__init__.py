"""sendframe: messaging campaigns from pandas DataFrames.

    >>> import pandas as pd, sendframe
    >>> sendframe.sms("Hello {name}!", sender="Shop").estimate(pd.DataFrame({"phone": ["34600123456"],
    ...                                                                       "name": ["Ana"]}))["parts"].tolist()
    [1]

Public names are imported lazily, so ``import sendframe`` stays fast and the optional
notebook stack (plotly, ipywidgets) is only needed by the functions that draw.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# the module that defines each public name, and the names
_PUBLIC: dict[str, tuple[str, ...]] = {
    "sendframe.api.client": ("AsyncClient", "Client"),
    "sendframe.campaign.contacts": ("read_contacts",),
    "sendframe.campaign.prepared": ("estimate_totals",),
    "sendframe.campaign.experiment": ("assign_variants", "variants"),
    "sendframe.campaign.ledger": ("Ledger",),
    "sendframe.campaign.message": (
        "Message", "landing_sms", "mailing", "message", "sms", "voice", "voice_audio", "whatsapp",
    ),
    "sendframe.campaign.shortcuts": (
        "send_landingsms", "send_mailing", "send_sms", "send_voice", "send_voice_audio", "send_whatsapp",
    ),
    "sendframe.delivery.callbacks": ("read_callbacks",),
    "sendframe.delivery.conversions": ("conversions",),
    "sendframe.delivery.experiments": ("compare_variants",),
    "sendframe.delivery.low_delivery": ("low_delivery",),
    "sendframe.delivery.metrics": ("delivery_summary",),
    "sendframe.delivery.outcomes": ("outcomes",),
    "sendframe.delivery.planning": ("plan_test",),
    "sendframe.delivery.receiver": ("Receiver",),
    "sendframe.delivery.records": ("fetch_records",),
    "sendframe.errors": (
        "ApiError", "AuthenticationError", "CampaignStoppedWarning", "ConfigurationError", "DiskFullError", "ErrorCode",
        "InputError", "LedgerInUseError", "LedgerMismatchError", "MissingVariableError", "NotFoundError",
        "NotSentError", "Problem", "RequestValidationError", "RowsSkippedWarning", "SendframeError", "SendframeWarning",
        "TemplateError", "UnknownOptionError", "UnknownOutcomeError",
    ),
    "sendframe.notebook.charts": ("dashboard",),
    "sendframe.notebook.experiment_charts": ("variant_chart",),
    "sendframe.notebook.composer": ("Composer",),
    "sendframe.notebook.monitor": ("Monitor",),
    "sendframe.sandbox.server": ("Sandbox",),
}
# public name -> module that defines it
_EXPORTS: dict[str, str] = {name: module for module, names in _PUBLIC.items() for name in names}

if TYPE_CHECKING:  # the same names for type checkers and IDEs (test_public_names keeps them equal to _EXPORTS)
    from sendframe.api.client import AsyncClient as AsyncClient
    from sendframe.api.client import Client as Client
    from sendframe.campaign.contacts import read_contacts as read_contacts
    from sendframe.campaign.experiment import assign_variants as assign_variants
    from sendframe.campaign.experiment import variants as variants
    from sendframe.campaign.ledger import Ledger as Ledger
    from sendframe.campaign.message import Message as Message
    from sendframe.campaign.message import landing_sms as landing_sms
    from sendframe.campaign.message import mailing as mailing
    from sendframe.campaign.message import message as message
    from sendframe.campaign.message import sms as sms
    from sendframe.campaign.message import voice as voice
    from sendframe.campaign.message import voice_audio as voice_audio
    from sendframe.campaign.message import whatsapp as whatsapp
    from sendframe.campaign.prepared import estimate_totals as estimate_totals
    from sendframe.campaign.shortcuts import send_landingsms as send_landingsms
    from sendframe.campaign.shortcuts import send_mailing as send_mailing
    from sendframe.campaign.shortcuts import send_sms as send_sms
    from sendframe.campaign.shortcuts import send_voice as send_voice
    from sendframe.campaign.shortcuts import send_voice_audio as send_voice_audio
    from sendframe.campaign.shortcuts import send_whatsapp as send_whatsapp
    from sendframe.delivery.callbacks import read_callbacks as read_callbacks
    from sendframe.delivery.conversions import conversions as conversions
    from sendframe.delivery.experiments import compare_variants as compare_variants
    from sendframe.delivery.low_delivery import low_delivery as low_delivery
    from sendframe.delivery.metrics import delivery_summary as delivery_summary
    from sendframe.delivery.outcomes import outcomes as outcomes
    from sendframe.delivery.planning import plan_test as plan_test
    from sendframe.delivery.receiver import Receiver as Receiver
    from sendframe.delivery.records import fetch_records as fetch_records
    from sendframe.errors import ApiError as ApiError
    from sendframe.errors import AuthenticationError as AuthenticationError
    from sendframe.errors import CampaignStoppedWarning as CampaignStoppedWarning
    from sendframe.errors import ConfigurationError as ConfigurationError
    from sendframe.errors import DiskFullError as DiskFullError
    from sendframe.errors import ErrorCode as ErrorCode
    from sendframe.errors import InputError as InputError
    from sendframe.errors import LedgerInUseError as LedgerInUseError
    from sendframe.errors import LedgerMismatchError as LedgerMismatchError
    from sendframe.errors import MissingVariableError as MissingVariableError
    from sendframe.errors import NotFoundError as NotFoundError
    from sendframe.errors import NotSentError as NotSentError
    from sendframe.errors import Problem as Problem
    from sendframe.errors import RequestValidationError as RequestValidationError
    from sendframe.errors import RowsSkippedWarning as RowsSkippedWarning
    from sendframe.errors import SendframeError as SendframeError
    from sendframe.errors import SendframeWarning as SendframeWarning
    from sendframe.errors import TemplateError as TemplateError
    from sendframe.errors import UnknownOptionError as UnknownOptionError
    from sendframe.errors import UnknownOutcomeError as UnknownOutcomeError
    from sendframe.notebook.charts import dashboard as dashboard
    from sendframe.notebook.composer import Composer as Composer
    from sendframe.notebook.experiment_charts import variant_chart as variant_chart
    from sendframe.notebook.monitor import Monitor as Monitor
    from sendframe.sandbox.server import Sandbox as Sandbox

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
