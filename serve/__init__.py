"""serve: the translator and the sentiment classifier as a Ray Serve application over `runtime` (torch-free).

    python -m serve                      # start it locally on models/ (http://127.0.0.1:8000, docs at /docs)
    serve deploy serve/config.yaml       # the same application on a running Ray cluster

An HTTP request goes HAProxy -> `Service` (FastAPI: validation of the JSON, health, readiness, timeouts, overload;
both models), whose `@serve.batch` methods gather concurrent requests into one call of the runtime's batched search
(`workers.py`, no Ray in it). The "split" layout puts an `Ingress` in front of a `Translator` and a `Sentiment`
deployment instead, each scaled on its own (docs/serving.md#two-layouts). What each module does:

    settings.py     ServeSettings: replicas, threads, batching, queue limits, timeouts (one dataclass, one source)
    schemas.py      the request bodies (pydantic) and their field limits
    limits.py       per-request checks against the loaded runtime model: its own limits and messages
    workers.py      the batch workers: group compatible requests, run the runtime once per group, count batch sizes
    api.py          the FastAPI app over any backend (the Ray handles, or workers in this process for tests)
    inprocess.py    that backend without Ray: the workers in this process, one request per call (the API tests)
    deployments.py  the Ray Serve deployments of both layouts and the application builder `serve deploy` imports
    local.py        start and stop Ray + Serve (+ HAProxy) on this machine (the command, the tests, the benchmark)
    processes.py    this machine's Serve processes: which, their CPU time and memory, what they listen on
    fault_injection.py  faults injected into a running service for its checks (half-sent requests, SIGSTOP)
"""
