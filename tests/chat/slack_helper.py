"""The Slack side of the chat tests, with Slack's official Python SDK (slack_sdk, pinned by the
test that installs it).

    python slack_helper.py sign      < {"secret": …, "timestamp": …, "body": …}
        prints the X-Slack-Signature Slack would send for that body at that time
        (slack_sdk.signature.SignatureVerifier.generate_signature).

    python slack_helper.py validate  < [{"blocks": [...]} | {"view": {...}}, ...]
        checks each message's blocks and each modal with slack_sdk's Block Kit models
        (slack_sdk.models), elements included; prints a JSON list of what is wrong, empty when
        all is well.
"""

import json
import sys


def sign(request):
    from slack_sdk.signature import SignatureVerifier

    verifier = SignatureVerifier(signing_secret=request["secret"])
    signature = verifier.generate_signature(
        timestamp=request["timestamp"], body=request["body"]
    )
    # The SDK's own verifier must take what its generator made (a sanity check of the call).
    headers = {
        "x-slack-request-timestamp": request["timestamp"],
        "x-slack-signature": signature,
    }
    if request.get("check_now", True) and not verifier.is_valid_request(
        request["body"], headers
    ):
        raise SystemExit("slack_sdk does not verify its own signature")
    return signature


def validate_object(obj, where, problems):
    """validate_json() on a model object and on the elements it holds."""
    try:
        obj.validate_json()
    except Exception as e:  # the SDK raises SlackObjectFormationError
        problems.append(f"{where}: {e}")
    for attr in ("elements", "accessory", "element", "text", "label", "placeholder"):
        child = getattr(obj, attr, None)
        if child is None or isinstance(child, (str, dict)):
            continue
        children = child if isinstance(child, list) else [child]
        for i, c in enumerate(children):
            if hasattr(c, "validate_json"):
                validate_object(c, f"{where}.{attr}[{i}]", problems)


def validate(items):
    from slack_sdk.models.blocks import Block
    from slack_sdk.models.views import View

    problems = []
    for n, item in enumerate(items):
        if "view" in item:
            try:
                view = View(**item["view"])
            except Exception as e:
                problems.append(f"view {n}: {e}")
                continue
            validate_object(view, f"view {n}", problems)
            blocks = view.blocks or []
            for i, b in enumerate(blocks):
                validate_object(b, f"view {n} block {i}", problems)
            continue
        for i, raw in enumerate(item.get("blocks", [])):
            block = Block.parse(raw)
            if block is None:
                problems.append(f"message {n} block {i}: unknown block type {raw.get('type')!r}")
                continue
            validate_object(block, f"message {n} block {i} ({raw.get('type')})", problems)
    return problems


def main():
    command = sys.argv[1]
    request = json.load(sys.stdin)
    if command == "sign":
        print(sign(request))
    elif command == "validate":
        print(json.dumps(validate(request)))
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main()
