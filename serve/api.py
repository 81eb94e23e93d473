"""The HTTP API: a FastAPI app over a backend that answers one request at a time (async).

In the service the backend is the Ray deployment handles (deployments.py), whose replicas batch concurrent
requests; in tests it can be the workers in this process (inprocess.py). Either way a request gets JSON back, or a
status with {"detail": a sentence}: 422 for input the model cannot take (the runtime's own messages), 503 when the
service is overloaded or a replica died under the request, 504 past the request's timeout. Never a 500 for input;
a fault of the service's own is a 500 naming an error id its log holds, nothing of its insides (faults.py).
Every error body is one sentence (errors.py), FastAPI's own validation and parse errors included; a body over
MAX_BODY_BYTES is refused (413) before it is read, or, sent in chunks, as soon as it passes it (BoundedBody).
OpenAPI docs: /docs (Swagger UI) and /openapi.json.
"""
from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, Protocol

from fastapi import FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from .errors import PARSE_ERROR, validation_sentence
from .faults import internal_error
from .schemas import SentimentRequest, TranslateRequest
from .settings import ServeSettings
from .workers import rss_mb

READY_TIMEOUT_S = 0.8  # /ready answers 503 by then: the models' info is read on this loop, never behind a search
# 20,000 characters (schemas.MAX_CHARS), each at most 6 bytes as a JSON escape (12 for one outside the BMP sent
# escaped, so such a text over ~10,900 characters gets this 413), and the settings: a larger body is refused before
# it is read, or (sent in chunks, without a Content-Length) as soon as it passes this (BoundedBody).
# The front refuses the same (serve/front.py, FrontLimits.body_bytes).
MAX_BODY_BYTES = 128 * 1024
KNOWN_FIELDS = {"/translate": list(TranslateRequest.model_fields), "/sentiment": list(SentimentRequest.model_fields)}
TIMEOUT_HEADER = "X-Request-Timeout"  # seconds; lowers (never raises) the service's request_timeout_s


class ServiceError(Exception):
    """A request the service could not answer, with the HTTP status and the sentence to send back."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


class Backend(Protocol):
    async def call(self, task: str, method: str, *args: Any) -> Any: ...


def problem(status: int, message: str) -> JSONResponse:
    return JSONResponse({"detail": message}, status_code=status)


class BodyTooLarge(Exception):
    """Raised into the app's read of a body past the cap, after the 413 went out: the app stops reading."""


class BoundedBody:
    """ASGI middleware: a body over `limit` bytes gets a 413. A Content-Length over it is refused before the body
    is read; a body without one (chunked) is counted as it arrives and refused the moment it passes the limit, so no
    more than `limit` and one message is ever held. The 413 says `Connection: close`: the server closes the
    connection instead of reading the rest of the body to reach the next request."""

    def __init__(self, app, limit: int = MAX_BODY_BYTES):
        self.app, self.limit = app, limit

    async def refuse(self, scope, send, sentence: str) -> None:
        response = problem(413, f"{sentence}; this service takes at most {self.limit} (one text of at most 20,000 "
                                "characters per request)")
        response.headers["Connection"] = "close"
        await response(scope, None, send)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            return await self.refuse(scope, send, f"the request body is {length.decode('latin-1')} bytes")
        received, refused = 0, False

        async def counted():
            nonlocal received, refused
            if refused:
                raise BodyTooLarge
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    refused = True
                    await self.refuse(scope, send, f"the request body passed {self.limit} bytes as it arrived "
                                                   "(sent in chunks, without a Content-Length)")
                    raise BodyTooLarge
            return message

        async def unless_refused(message):  # the app's own answer to the cut body (a 400) is dropped
            if not refused:
                await send(message)

        try:
            await self.app(scope, counted, unless_refused)
        except Exception:
            if not refused:
                raise


def timeout_of(settings: ServeSettings, header: str | None) -> float:
    if header is None:
        return settings.request_timeout_s
    try:
        asked = float(header)
    except ValueError:
        raise ServiceError(422, f"{TIMEOUT_HEADER} must be a number of seconds, got {header!r}") from None
    if not asked > 0:
        raise ServiceError(422, f"{TIMEOUT_HEADER} must be positive, got {header!r}")
    return min(asked, settings.request_timeout_s)


def late(timeout: float) -> JSONResponse:
    return problem(504, f"no answer within {timeout:g} s: the service is busy or the request is slow "
                        "(a long text with a wide beam); try again, or ask for less")


async def answer(backend: Backend, task: str, body: dict[str, Any], settings: ServeSettings,
                 timeout_header: str | None) -> Response | dict[str, Any]:
    """One request through the backend: its result, or the status and sentence of what went wrong."""
    start = time.monotonic()
    try:
        timeout = timeout_of(settings, timeout_header)
        result = await asyncio.wait_for(backend.call(task, task, body), timeout)
    except ServiceError as e:
        return problem(e.status, e.message)
    except TimeoutError:
        return late(timeout)
    # Where the search runs on this event loop (the "one" layout), the timer cannot fire while it runs: the answer
    # comes back late instead. The client asked for none after `timeout`, so it gets the same 504.
    if time.monotonic() - start > timeout:
        return late(timeout)
    # encoded in the lane's thread (encoding.py), sent as it is; from another deployment ("split") Ray hands the
    # JsonAnswer over as plain bytes
    if isinstance(result, bytes):
        return Response(bytes(result), media_type="application/json")
    if "error" in result:
        return problem(result["status"], result["error"])
    return result


def build_api(backend: Backend, settings: ServeSettings) -> FastAPI:
    api = FastAPI(title="tx serve", version="1", description=(
        "The playground's translator (DE↔EN) and sentiment classifier over the onnxruntime API, batching "
        "concurrent requests. Send one text per request and many requests at once: that is what batching serves."))

    async def both(method: str) -> list[dict]:
        """The same call on both model deployments (readiness, info, stats), at once."""
        return await asyncio.gather(backend.call("translate", method), backend.call("sentiment", method))

    api.add_middleware(BoundedBody, limit=MAX_BODY_BYTES)

    @api.exception_handler(RequestValidationError)
    async def invalid(request: Request, e: RequestValidationError) -> JSONResponse:
        return problem(422, validation_sentence(e.errors(), KNOWN_FIELDS.get(request.url.path, ())))

    @api.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, e: StarletteHTTPException) -> JSONResponse:
        message = PARSE_ERROR if e.status_code == 400 and "parsing the body" in str(e.detail) else str(e.detail)
        if e.status_code == 404:
            message = f"no such route: {request.method} {request.url.path} (the API: /docs)"
        elif e.status_code == 405:
            message = f"{request.url.path} does not take {request.method} (the API: /docs)"
        return JSONResponse({"detail": message}, status_code=e.status_code, headers=getattr(e, "headers", None))

    @api.exception_handler(ServiceError)
    async def unanswered(request: Request, e: ServiceError) -> JSONResponse:  # overloaded, a replica gone
        return problem(e.status, e.message)

    @api.exception_handler(Exception)
    async def unexpected(request: Request, e: Exception) -> JSONResponse:  # never a traceback nor its text
        return problem(500, internal_error(f"answering {request.method} {request.url.path}", e))

    @api.post("/translate", summary="Translate one text")
    async def translate(request: TranslateRequest, x_request_timeout: str | None = Header(None)):
        """-> text, confidence (geometric mean of the token probabilities), tokens, token_ids, token_probs, score,
        src_tokens, truncated, warning (text mostly outside what the model knows), provider (the onnxruntime
        provider that really ran), precision, timings (batch_size: requests in the replica's batch, group_size:
        those sharing this search, model_ms: that search), attention (with attention=cross/all)."""
        return await answer(backend, "translate", request.model_dump(), settings, x_request_timeout)

    @api.post("/sentiment", summary="Classify one review")
    async def sentiment(request: SentimentRequest, x_request_timeout: str | None = Header(None)):
        """-> label, probs (calibrated: the exported graph divides the logits by the model's temperature), tokens,
        truncated, warning, provider, precision, timings, attention (with attention=true)."""
        return await answer(backend, "sentiment", request.model_dump(), settings, x_request_timeout)

    @api.get("/health", summary="Liveness: the ingress answers")
    async def health():
        return {"status": "ok"}

    @api.get("/ready", summary="Readiness: every model deployment answers")
    async def ready():
        try:
            infos = await asyncio.wait_for(both("info"), READY_TIMEOUT_S)
        except (ServiceError, TimeoutError) as e:
            return problem(503, f"not ready: {getattr(e, 'message', None) or 'a model deployment did not answer'}")
        return {"ready": True, "models": {info["task"]: info["model"] for info in infos}}

    @api.get("/info", summary="What is served: languages, labels, limits, precisions, providers")
    async def info():
        infos = await both("info")
        public = settings.to_dict() | {"models_dir": Path(settings.models_dir).name}  # never the machine's path
        return {item["task"]: item for item in infos} | {"settings": public}

    @api.get("/stats", summary="Batch sizes seen and memory, per deployment replica answering")
    async def stats():
        both_stats = await both("stats")
        return {"translate": both_stats[0], "sentiment": both_stats[1], "ingress": {"rss_mb": rss_mb()}}

    return api
