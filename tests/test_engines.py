"""The one dispatch point: pandas frames stay on pandas (no engine looked up), and every function marked
``dispatched`` has its Dask twin, found through the ``sendframe.engines`` entry point."""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import pytest

import sendframe
from sendframe.engines import PANDAS, dispatched, engine_for, engine_named, registered_engines
from sendframe.errors import ConfigurationError
from sendframe.scale.engine import TWINS

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "sendframe"


def _dispatched_functions() -> set[str]:
    """module.qualname of every function decorated with ``dispatched(...)`` in the package."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            methods = [(f"{node.name}.", n) for n in node.body] if isinstance(node, ast.ClassDef) else [("", node)]
            for prefix, function in methods:
                if isinstance(function, ast.FunctionDef) and any(
                        ast.unparse(d).startswith("dispatched(") for d in function.decorator_list):
                    found.add(f"{module}.{prefix}{function.name}")
    return found


def test_pandas_frames_never_look_up_an_engine():
    registered_engines.cache_clear()
    contacts = pd.DataFrame({"phone": ["34600123456", "34600123456"], "name": ["Ana", "Bo"]})
    msg = sendframe.sms("Hi {name}", sender="Shop")
    assert msg.plan(contacts)["action"].tolist() == ["send", "skipped_duplicate"]
    assert sendframe.estimate_totals(msg.estimate(contacts))["rows"] == 2
    assert registered_engines.cache_info().currsize == 0
    assert engine_for(contacts, None, "a.csv") is PANDAS


def test_every_dispatched_function_has_a_dask_twin_and_every_twin_a_function():
    marked = _dispatched_functions()
    # the Message's views (plan, estimate, ...) reach Dask through prepare: one dispatch point for them
    assert {f"sendframe.campaign.message.Message.{name}" for name in ("prepare", "render", "send")} <= marked
    assert not {f"sendframe.campaign.message.Message.{name}" for name in ("plan", "estimate", "preview")} & marked
    # preflight, estimate and preview.render are the engines of a Message: a Dask frame reaches them through
    # Message.prepare and Message.render, per partition
    assert not {"sendframe.campaign.preflight.preflight", "sendframe.campaign.prepared.estimate",
                "sendframe.campaign.preview.render"} & marked
    # Message.render, .prepare, .send; estimate_totals, read_contacts, read_callbacks, latest_status,
    # message_outcomes, delivery_summary
    assert len(marked) == 9
    assert sorted(marked ^ set(TWINS)) == []
    assert type(engine_named("dask")).__module__ == "sendframe.scale.engine"


def test_an_engine_nobody_registered_is_a_clear_error():
    with pytest.raises(ConfigurationError, match=r"No sendframe engine named 'polars' is installed; installed: dask"):
        engine_for(pd.DataFrame(), named="polars")


def test_a_dispatched_function_must_name_its_frame_parameter():
    with pytest.raises(TypeError, match="has no parameter 'frame'"):
        dispatched("frame")(lambda contacts: contacts)
