"""sayso's MCP endpoint through the official Python SDK (`mcp` from PyPI), over streamable HTTP.

Run by tests/mcp.rs: `python mcp_client.py URL` with the API key in SAYSO_KEY. Prints one JSON
object per line on stdout, one per step: the tools listed, the question asked (the Rust test
then answers it through the page), the awaited answer, and the decision read back. Any
failure raises, so the exit code is non-zero with the reason on stderr.
"""

import asyncio
import contextlib
import json
import os
import sys

from mcp import ClientSession


def emit(step, **fields):
    print(json.dumps({"step": step, **fields}), flush=True)


@contextlib.asynccontextmanager
async def connect(url, key):
    headers = {"Authorization": f"Bearer {key}"}
    try:
        # SDK 2.x: the transport takes a configured HTTP client.
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                yield streams[0], streams[1]
    except ImportError:
        # SDK 1.x.
        from mcp.client.streamable_http import streamablehttp_client

        async with streamablehttp_client(url, headers=headers) as streams:
            yield streams[0], streams[1]


def field(result, snake, camel):
    # SDK 2.x names result fields in snake_case, 1.x in camelCase.
    return getattr(result, snake) if hasattr(result, snake) else getattr(result, camel)


def structured(result):
    if field(result, "is_error", "isError"):
        raise SystemExit(f"tool error: {result.content}")
    data = field(result, "structured_content", "structuredContent")
    if not isinstance(data, dict):
        raise SystemExit(f"no structured content in {result}")
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    return data, " ".join(texts)


async def main(url, key):
    async with connect(url, key) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

            tools = await session.list_tools()
            emit("tools", names=sorted(t.name for t in tools.tools))

            asked = await session.call_tool(
                "ask_user",
                {
                    "question": "Which region should the new cluster run in?",
                    "kind": "choose",
                    "options": [
                        {"label": "eu-west", "description": "Ireland"},
                        "us-east",
                    ],
                    "project": "python-sdk",
                },
            )
            handle, text = structured(asked)
            emit("asked", decision_id=handle["decision_id"], web_url=handle["web_url"], text=text)

            for _ in range(10):
                awaited = await session.call_tool(
                    "await_decision", {"decision_id": handle["decision_id"], "timeout_s": 20}
                )
                decision, text = structured(awaited)
                if decision["status"] != "pending":
                    break
            emit("awaited", status=decision["status"], outcome=decision["outcome"], text=text)

            got = await session.call_tool("get_decision", {"decision_id": handle["decision_id"]})
            decision, text = structured(got)
            emit("got", status=decision["status"], outcome=decision["outcome"], text=text)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], os.environ["SAYSO_KEY"]))
