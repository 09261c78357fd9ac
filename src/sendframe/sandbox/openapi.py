"""The OpenAPI 3.1 document of the public API, served by the sandbox at ``GET /openapi.json``.

Built from the shared pydantic models (``sendframe.api.models``): request bodies use their validation
schemas, answers their serialization schemas, so the document cannot drift from what the sandbox
validates. The models' own rule validators (``between``, ``one_of``, the 14-digit date-time, ...) are
invisible to pydantic's schema generator, so :func:`document` reads them off the fields and writes
them as ``minimum``/``maximum``/``enum``/``pattern``.

    >>> doc = document("http://127.0.0.1:8080")
    >>> sorted(doc["paths"])[:2]
    ['/api/rest/landingsms', '/api/rest/mailing']
"""

from __future__ import annotations

import copy
import inspect
from functools import lru_cache
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from sendframe.api import models

__all__ = ["OPENAPI_VERSION", "document"]

OPENAPI_VERSION = "3.1.0"
_REF = "#/components/schemas/{model}"

_SEND_PATHS: dict[str, tuple[str, str]] = {
    "sms": ("/api/rest/sms", "Send SMS"),
    "mailing": ("/api/rest/mailing", "Send email"),
    "voice": ("/api/rest/voice", "Text-to-speech call"),
    "voiceAudio": ("/api/rest/voiceAudio", "Audio-file call"),
    "landingsms": ("/api/rest/landingsms", "SMS with a landing page"),
    "whatsapp": ("/api/rest/whatsapp", "Send WhatsApp template messages"),
}

# schema fragments for the models' named rule validators (sendframe.api.validation)
_VALIDATOR_SCHEMAS: dict[str, dict[str, Any]] = {
    "_check_not_empty": {"minLength": 1},
    "_check_wire_datetime": {"pattern": "^[0-9]{14}$", "description": "UTC date-time YYYYmmddHHiiss"},
    "_check_clock": {"pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$", "description": "HH:MM, UTC 24-hour"},
    # "at least one letter" of the alphanumeric form adds nothing: 1-11 digits are valid as digits
    "_check_sender": {"pattern": "^([0-9]{1,15}|[A-Za-z0-9]{1,11})$"},
    "_check_base64": {"contentEncoding": "base64"},
}
_TEXT_OR_TEXTS = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}

_ERROR = {"$ref": "#/components/schemas/ErrorResponse"}


def _rule_schema(validator: Any) -> dict[str, Any]:
    """The JSON-schema fragment of one AfterValidator/PlainValidator of a model field, or {}."""
    func = getattr(validator, "func", None)
    if func is None:
        return {}
    name = getattr(func, "__qualname__", "")
    if name.startswith("between.") or name.startswith("one_of."):
        scope = inspect.getclosurevars(func).nonlocals
        if "low" in scope and "high" in scope:
            return {"minimum": scope["low"], "maximum": scope["high"]}
        if "allowed_set" in scope:
            return {"enum": sorted(scope["allowed_set"], key=str)}
    if name == "_check_text_or_texts":
        return dict(_TEXT_OR_TEXTS)
    return dict(_VALIDATOR_SCHEMAS.get(name, {}))


def _field_rules(field: Any) -> dict[str, Any]:
    rules: dict[str, Any] = {}
    for item in field.metadata:
        rules.update(_rule_schema(item))
    # rules hidden one level down, e.g. ``NonEmptyText | None`` or ``Annotated[int, between()] | None``
    for arg in getattr(field.annotation, "__args__", ()) or ():
        for item in getattr(arg, "__metadata__", ()) or ():
            rules.update(_rule_schema(item))
    return rules


def _apply_rules(schema: dict[str, Any], rules: dict[str, Any]) -> None:
    """Put ``rules`` on the non-null branch of a property schema (or on the schema itself)."""
    if "anyOf" in rules:
        nullable = any(branch.get("type") == "null" for branch in schema.get("anyOf", []))
        schema.pop("anyOf", None)
        schema.pop("type", None)
        schema["anyOf"] = rules["anyOf"] + ([{"type": "null"}] if nullable else [])
        return
    branches = [b for b in schema.get("anyOf", []) if b.get("type") != "null"] or [schema]
    for branch in branches:
        for key, value in rules.items():
            if key == "description":
                schema.setdefault("description", value)
            elif key == "contentEncoding" and branch.get("type") != "string":
                continue
            else:
                branch[key] = value


def _enrich(defs: dict[str, Any], models: dict[str, type[BaseModel]]) -> None:
    for name, schema in defs.items():
        schema.pop("title", None)
        model = models.get(name)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        if model is None:
            continue
        for field_name, field in model.model_fields.items():
            wire = field.alias or field_name
            prop = schema.get("properties", {}).get(wire)
            if prop is not None:
                _apply_rules(prop, _field_rules(field))


def _all_models() -> dict[str, type[BaseModel]]:
    return {name: getattr(models, name) for name in models.__all__ if isinstance(getattr(models, name), type)}


@lru_cache(maxsize=1)
def _components() -> dict[str, Any]:
    request_models: list[type[BaseModel]] = [*models.REQUEST_MODELS.values(), models.OtpCheckRequest]
    answer_models: list[type[BaseModel]] = [models.SendResponse, models.ErrorResponse, models.LookupResponse,
                                            models.OtpCheckResponse]
    modes: list[tuple[type[BaseModel], JsonSchemaMode]] = [
        *((model, "validation") for model in request_models),
        *((model, "serialization") for model in answer_models),
    ]
    _, top = models_json_schema(modes, ref_template=_REF)
    defs: dict[str, Any] = top["$defs"]
    _enrich(defs, _all_models())
    return defs


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def _error(description: str, **extra: Any) -> dict[str, Any]:
    return {"description": description, "content": _json(_ERROR), **extra}


def _common_errors() -> dict[str, Any]:
    return {
        "401": _error(
            "Missing or wrong credentials (code 401).",
            headers={"WWW-Authenticate": {"schema": {"type": "string"}, "description": 'Basic realm="sendframe"'}},
        ),
        "403": _error("The client's IP address is not registered (code 403), "
                      "or the channel is not enabled (code 111)."),
        "413": _error("The request body is larger than 10 MiB (code 413)."),
    }


def _send_operation(channel: str, model_name: str, summary: str) -> dict[str, Any]:
    send = {"$ref": "#/components/schemas/SendResponse"}
    return {
        "operationId": f"send_{channel}",
        "summary": summary,
        "requestBody": {"required": True, "content": _json({"$ref": _REF.format(model=model_name)})},
        "responses": {
            "202": {"description": "Every recipient accepted.", "content": _json(send)},
            "207": {"description": "Some recipients accepted, some rejected (each with an error).",
                    "content": _json(send)},
            "400": _error("The request was rejected as a whole (codes 100, 101, 102, 105, 110, 140, ...)."),
            **_common_errors(),
        },
    }


def _lookup_operation() -> dict[str, Any]:
    return {
        "operationId": "get_sms",
        "summary": "SMS message lookup",
        "parameters": [
            {
                "name": "id",
                "in": "path",
                "required": True,
                "description": "One message id, or up to 100 separated by commas.",
                "schema": {"type": "string", "minLength": 1},
            }
        ],
        "responses": {
            "200": {"description": "The records of the known ids.",
                    "content": _json({"$ref": "#/components/schemas/LookupResponse"})},
            "400": _error("More than 100 ids (code 101)."),
            "404": _error("None of the ids is known (code 404)."),
            **_common_errors(),
        },
    }


def _otp_operation() -> dict[str, Any]:
    return {
        "operationId": "check_otp",
        "summary": "Check a one-time password",
        "requestBody": {"required": True, "content": _json({"$ref": "#/components/schemas/OtpCheckRequest"})},
        "responses": {
            "200": {
                "description": "The outcome: valid, invalid, expired, blocked or not_found.",
                "content": _json({"$ref": "#/components/schemas/OtpCheckResponse"}),
            },
            "400": _error("The body is not valid (code 100)."),
            **_common_errors(),
        },
    }


def document(public_url: str) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the public API as served by the sandbox at ``public_url``.

    >>> document("http://127.0.0.1:8080")["servers"]
    [{'url': 'http://127.0.0.1:8080'}]
    """
    paths: dict[str, Any] = {}
    for channel, (path, summary) in _SEND_PATHS.items():
        paths[path] = {"post": _send_operation(channel, models.REQUEST_MODELS[channel].__name__, summary)}
    paths["/api/rest/sms/{id}"] = {"get": _lookup_operation()}
    paths["/api/rest/otp/check"] = {"post": _otp_operation()}
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "Multichannel messaging API (sendframe sandbox)",
            "version": "1.0.0",
            "description": "SMS, email, voice, landing SMS and WhatsApp sending, SMS lookup and OTP check. "
            "Decisions where the specification is silent: docs/api-notes.md.",
        },
        "servers": [{"url": str(public_url).rstrip("/")}],
        "security": [{"basicAuth": []}],
        "paths": paths,
        "components": {
            "schemas": copy.deepcopy(_components()),
            "securitySchemes": {"basicAuth": {"type": "http", "scheme": "basic"}},
        },
    }
