"""The OpenAPI 3.1 document of the public API, served by the sandbox at ``GET /openapi.json``.

Built from the shared pydantic models (``sendframe.api.models``) by pydantic itself: request bodies use
their validation schemas, answers their serialization schemas, so the document cannot drift from what
the sandbox validates. The models state their rules (ranges, enumerations, patterns, lengths, the rules
across fields such as "body, templateId or templateV2Id"); what no schema can state is listed in
docs/api-notes.md ("What /openapi.json cannot state").

    >>> doc = document("http://127.0.0.1:8080")
    >>> sorted(doc["paths"])[:2]
    ['/api/rest/landingsms', '/api/rest/mailing']
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from sendframe.api import models
from sendframe.api.wire import send_path

__all__ = ["OPENAPI_VERSION", "document"]

OPENAPI_VERSION = "3.1.0"
_REF = "#/components/schemas/{model}"

_SEND_SUMMARIES: dict[str, str] = {
    "sms": "Send SMS", "mailing": "Send email", "voice": "Text-to-speech call", "voiceAudio": "Audio-file call",
    "landingsms": "SMS with a landing page", "whatsapp": "Send WhatsApp template messages"}

_ERROR = {"$ref": "#/components/schemas/ErrorResponse"}


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
    return top["$defs"]  # type: ignore[no-any-return]


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
    for channel, summary in _SEND_SUMMARIES.items():
        paths[send_path(channel)] = {"post": _send_operation(channel, models.REQUEST_MODELS[channel].__name__, summary)}
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
