"""Verifies one recorded webhook with the Standard Webhooks reference library (PyPI
`standardwebhooks`), independently of sayso's own signing code.

Reads a JSON object from stdin: {"secret": "whsec_…", "headers": {name: value}, "body_b64": "…"}.
Prints "verified" and exits 0 when the signature is valid, else prints why and exits 1.
"""

import base64
import json
import sys

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


def main() -> int:
    request = json.load(sys.stdin)
    body = base64.b64decode(request["body_b64"])
    try:
        Webhook(request["secret"]).verify(body, request["headers"], json_parse=False)
    except WebhookVerificationError as error:
        print(f"not verified: {error}")
        return 1
    print("verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())
