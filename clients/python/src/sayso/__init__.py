"""sayso for Python: ask a person from an agent, wait for the answer, verify webhooks.

``Client`` (blocking) and ``AsyncClient`` (asyncio) ask, wait, cancel and read; the
``Decision`` they return says what the person decided; ``verify_webhook`` checks the signed
webhook of a ``callback_url``. Every failure is a ``SaysoError`` naming what is wrong.
"""

from ._async import AsyncClient
from ._body import AskFields
from ._errors import SaysoError, Timeout, WebhookVerificationError
from ._models import (
    FINAL_STATUSES,
    Answer,
    AnsweredBy,
    Approval,
    AskHandle,
    AuditEvent,
    Decision,
    Notification,
    ResolvedEvent,
)
from ._sync import Client
from ._webhooks import verify_webhook

__version__ = "0.1.0"

__all__ = [
    "FINAL_STATUSES",
    "Answer",
    "AnsweredBy",
    "Approval",
    "AskFields",
    "AskHandle",
    "AsyncClient",
    "AuditEvent",
    "Client",
    "Decision",
    "Notification",
    "ResolvedEvent",
    "SaysoError",
    "Timeout",
    "WebhookVerificationError",
    "__version__",
    "verify_webhook",
]
