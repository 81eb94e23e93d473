"""The Ray Serve application, in one of two layouts (`ServeSettings.layout`):

- "one" (the default): one deployment, `Service`, is the HTTP ingress (FastAPI) and holds both models. Its
  lanes (batcher.py) gather the requests that reach the replica together. With Serve's HAProxy front and
  direct ingress (serve/local.py turns them on) a request crosses one process boundary, not three: the fastest
  layout measured on one machine (docs/serving.md#two-layouts).
- "split": an `Ingress` (FastAPI) in front of a `Translator` and a `Sentiment` deployment, each with its own
  replicas: what a cluster wants when the translator needs eight replicas and the classifier one.

    serve deploy serve/config.yaml        # import_path: serve.deployments:app_builder, args: ServeSettings fields

Each model's requests are batched by its `Lanes` (batcher.py): a light and a heavy lane, each gathering the
requests that wait (at most `max_batch_size`, the first waiting `batch_wait_timeout_s` for company) and running
its worker on them in a thread, so the replica's event loop keeps answering /health, /ready and timeouts while a
search runs; what arrives meanwhile forms the next batch. Beyond
`max_ongoing_requests` + `max_queued_requests` a request gets 503: from the replica itself in "one" (ReplicaBackend),
from Serve's back-pressure on the ingress' calls in "split" (HandleBackend).
"""
from __future__ import annotations

from typing import Any

from ray import serve
from ray.exceptions import RayActorError
from ray.serve.exceptions import BackPressureError, DeploymentUnavailableError, RequestCancelledError

from .api import ServiceError, build_api
from .batcher import Lanes
from .encoding import encoded
from .settings import ServeSettings
from .workers import SentimentWorker, TranslationWorker, Worker

APP_NAME = "tx"
OVERLOADED = ("overloaded: {n} requests are already waiting for the {task} model (max_queued_requests); "
              "retry in a moment")
LET_IN = 4096  # Serve's max_ongoing_requests for the "one" layout: HAProxy's own maxconn
HELD = ("overloaded: this replica already holds {n} requests (max_ongoing_requests + max_queued_requests), the "
        "{task} model is busy; retry in a moment")
DIED = ("the {task} replica serving this request stopped ({kind}); Serve is starting a new one: retry in a few "
        "seconds")


def lanes_of(worker: Worker, settings: ServeSettings, name: str) -> Lanes:
    """A worker's light and heavy lanes with the settings' batch size and wait; answers leave them as JSON bytes
    (encoding.py: made in the lane's thread, not on the event loop)."""
    return Lanes(encoded(worker.run), worker.heavy, settings.max_batch_size, settings.batch_wait_timeout_s,
                 name=name)


class BatchedModel:
    """What both model deployments of the "split" layout share: the worker and its lanes, the info and stats
    calls."""

    worker_class: type = TranslationWorker

    def __init__(self, settings: dict[str, Any]):
        s = ServeSettings.from_dict(settings)
        self.worker = self.worker_class.load(s.models_dir, s.provider, s.precisions, s.threads)
        self.lanes = lanes_of(self.worker, s, self.worker_class.task)

    async def run(self, request: dict[str, Any]) -> dict[str, Any]:
        return await self.lanes.submit(request)

    def info(self) -> dict[str, Any]:
        return self.worker.info()

    def stats(self) -> dict[str, Any]:
        return self.worker.stats() | self.lanes.load()


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


class ReplicaBackend:
    """The API's backend in the "one" layout: the models in this same replica, through their lanes. It
    bounds what the replica holds itself: behind HAProxy (direct ingress) Serve's max_ongoing/max_queued limits
    let a burst of 160 requests through to the batch queues (measured), so beyond their sum a request gets 503."""

    def __init__(self, service: Service):
        self.service = service
        s = service.settings
        self.limit = None if s.max_queued_requests == -1 else s.max_ongoing_requests + s.max_queued_requests
        self.held = 0  # requests in this replica's lanes now, waiting or in a search (counted on one event loop)

    async def call(self, task: str, method: str, *args: Any) -> Any:
        if method == "stats":
            return self.service.workers[task].stats() | self.service.lanes[task].load()
        if method != task:
            return getattr(self.service.workers[task], method)()
        if self.limit is not None and self.held >= self.limit:
            raise ServiceError(503, HELD.format(n=self.held, task=task))
        self.held += 1
        try:
            return await self.service.lanes[task].submit(*args)
        finally:
            self.held -= 1


@serve.deployment(ray_actor_options={"num_cpus": 0})
@serve.ingress()
class Service:
    """The "one" layout: the HTTP API and both models in each replica."""

    def __init__(self, settings: dict[str, Any]):
        self.settings = s = ServeSettings.from_dict(settings)
        load = (s.models_dir, s.provider, s.precisions, s.threads)
        self.workers = {"translate": TranslationWorker.load(*load), "sentiment": SentimentWorker.load(*load)}
        self.lanes = {task: lanes_of(worker, s, task) for task, worker in self.workers.items()}

    def __serve_build_asgi_app__(self):
        return build_api(ReplicaBackend(self), self.settings)


class HandleBackend:
    """The API's backend in the "split" layout: calls into the model deployments, their failures turned into
    statuses and sentences."""

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
    if settings.layout == "one":
        # Serve's own limits held a burst in its queue before the replica's code, unbounded behind HAProxy: every
        # request is let in, and ReplicaBackend refuses beyond max_ongoing + max_queued itself (503, a sentence).
        return Service.options(num_replicas=settings.replicas, max_ongoing_requests=LET_IN,
                               max_queued_requests=-1).bind(args)
    translator = Translator.options(num_replicas=settings.translate_replicas, **limits).bind(args)
    sentiment = Sentiment.options(num_replicas=settings.sentiment_replicas, **limits).bind(args)
    return Ingress.options(num_replicas=settings.ingress_replicas,
                           max_ongoing_requests=settings.ingress_max_ongoing_requests,
                           max_queued_requests=settings.ingress_max_queued_requests).bind(translator, sentiment, args)


def app_builder(args: dict[str, Any]):
    """`serve deploy`'s entry (import_path: serve.deployments:app_builder): the config file's `args` are
    ServeSettings fields."""
    return build_app(ServeSettings.from_dict(dict(args)))
