"""Whose fault an error is: the request's (a 4xx with a sentence that says what to change) or the service's own
(a 500 that says nothing of the service's insides).

Only the checks of the input (limits.py, costs.py through it) decide that a request is at fault: they raise
`InputError`, whose sentence the client gets as a 422. Anything else that goes wrong while a request is served (a
check that crashes, a search that raises, an answer that cannot be encoded, a bug in a route) is the service's
fault: the client gets a 500 naming an error id and no exception text, class or path; the service's log holds the
traceback under that id (logger "serve"; in a Ray Serve replica, with no handler set, it goes to the replica's
stderr: the Ray session's logs/worker-*.err of the process whose `:actor_name:` is `ServeReplica:tx:...`).
"""
from __future__ import annotations

import logging
import uuid

log = logging.getLogger("serve")


class InputError(Exception):
    """The request's own fault, raised where the input is checked; its message is the sentence the client gets."""


def internal_error(context: str, exc: BaseException) -> str:
    """Log `exc` (its traceback) with a new error id and `context` (what the service was doing: for the log only);
    the sentence a client gets for it."""
    error_id = uuid.uuid4().hex[:12]
    log.error("internal error %s while %s", error_id, context, exc_info=exc)
    return (f"internal error (error id {error_id}): the service failed on this request through no fault of the "
            "request; its log holds the details under this id")
