"""The Ray Serve application: an `Ingress` (FastAPI) in front of a `Translator` and a `Sentiment` deployment.

    serve deploy serve/config.yaml        # import_path: serve.deployments:app_builder, args: ServeSettings fields

Each model deployment's `@serve.batch` method receives the requests that arrived within `batch_wait_timeout_s`
of each other (at most `max_batch_size`) and runs its worker on them; what arrives meanwhile forms the next batch.
Back-pressure is Serve's own: a caller (the ingress) keeps at most `max_queued_requests` waiting for a deployment,
beyond that the handle raises BackPressureError, answered 503.
"""
from __future__ import annotations

from typing import Any

from ray import serve
from ray.exceptions import RayActorError
from ray.serve.exceptions import BackPressureError, DeploymentUnavailableError, RequestCancelledError

from .api import ServiceError, build_api
from .settings import ServeSettings
from .workers import SentimentWorker, TranslationWorker

APP_NAME = "tx"
OVERLOADED = ("overloaded: {n} requests are already waiting for the {task} model (max_queued_requests); "
              "retry in a moment")
DIED = ("the {task} replica serving this request stopped ({kind}); Serve is starting a new one: retry in a few "
        "seconds")


class BatchedModel:
    """What both model deployments share: the worker, the batch settings applied, the info and stats calls."""

    worker_class: type = TranslationWorker

    def __init__(self, settings: dict[str, Any]):
        s = ServeSettings.from_dict(settings)
        self.worker = self.worker_class.load(s.models_dir, s.provider, s.precisions, s.threads)
        self.run.set_max_batch_size(s.max_batch_size)
        self.run.set_batch_wait_timeout_s(s.batch_wait_timeout_s)

    @serve.batch(max_batch_size=16, batch_wait_timeout_s=0.01)  # replaced in __init__ by the settings' values
    async def run(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # On the replica's event loop, blocking it while the search runs: the requests that arrive meanwhile wait in
        # Ray's (C++) queue and form the next batch. In a thread instead (asyncio.to_thread), the search's Python
        # held the GIL against the loop taking requests in: batches of 1.5, a third of the throughput (measured,
        # docs/serving.md#choosing-the-batch). Serve's own control calls run on another loop.
        return self.worker.run(requests)

    def info(self) -> dict[str, Any]:
        return self.worker.info()

    def stats(self) -> dict[str, Any]:
        return self.worker.stats()


@serve.deployment(ray_actor_options={"num_cpus": 0.5})
class Translator(BatchedModel):
    worker_class = TranslationWorker

    async def translate(self, request: dict[str, Any]) -> dict[str, Any]:
        return await self.run(request)


@serve.deployment(ray_actor_options={"num_cpus": 0.5})
class Sentiment(BatchedModel):
    worker_class = SentimentWorker

    async def sentiment(self, request: dict[str, Any]) -> dict[str, Any]:
        return await self.run(request)


class HandleBackend:
    """The API's backend: calls into the model deployments, their failures turned into statuses and sentences."""

    def __init__(self, handles: dict[str, Any]):
        self.handles = handles

    async def call(self, task: str, method: str, *args: Any) -> Any:
        try:
            return await getattr(self.handles[task], method).remote(*args)
        except BackPressureError as e:
            raise ServiceError(503, OVERLOADED.format(n=e.args[0] if e.args else "too many", task=task)) from e
        except (RayActorError, DeploymentUnavailableError, RequestCancelledError) as e:
            raise ServiceError(503, DIED.format(task=task, kind=type(e).__name__)) from e


@serve.deployment(ray_actor_options={"num_cpus": 0})
@serve.ingress()
class Ingress:
    def __init__(self, translator, sentiment, settings: dict[str, Any]):
        self.backend = HandleBackend({"translate": translator, "sentiment": sentiment})
        self.settings = ServeSettings.from_dict(settings)

    def __serve_build_asgi_app__(self):
        return build_api(self.backend, self.settings)


def build_app(settings: ServeSettings):
    """The bound application: what `serve.run` starts and `serve deploy` builds through `app_builder`."""
    args = settings.to_dict()
    limits = {"max_ongoing_requests": settings.max_ongoing_requests,
              "max_queued_requests": settings.max_queued_requests}
    translator = Translator.options(num_replicas=settings.translate_replicas, **limits).bind(args)
    sentiment = Sentiment.options(num_replicas=settings.sentiment_replicas, **limits).bind(args)
    return Ingress.options(num_replicas=settings.ingress_replicas,
                           max_ongoing_requests=settings.ingress_max_ongoing_requests,
                           max_queued_requests=settings.ingress_max_queued_requests).bind(translator, sentiment, args)


def app_builder(args: dict[str, Any]):
    """`serve deploy`'s entry (import_path: serve.deployments:app_builder): the config file's `args` are
    ServeSettings fields."""
    return build_app(ServeSettings.from_dict(dict(args)))
