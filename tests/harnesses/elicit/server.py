"""An MCP server on the official Python SDK whose tools ask the user in the middle of the call
(MCP elicitation), as a real server does: `sign_up` asks for a form, `connect_account` asks
the user to open a page (URL mode). Each appends what came back, exactly as the SDK read it
off the wire, as one JSON line to the file $ELICIT_LOG, and returns it to the model."""

import json
import os

from mcp.server.fastmcp import Context, FastMCP

server = FastMCP("signup")

SIGN_UP = {
    "type": "object",
    "title": "New seat",
    "required": ["email", "seats", "plan", "vat"],
    "properties": {
        "email": {"type": "string", "format": "email", "title": "Email"},
        "seats": {"type": "integer", "title": "Seats", "minimum": 1, "maximum": 50, "default": 5},
        "budget": {"type": "number", "title": "Monthly budget", "minimum": 0},
        "vat": {"type": "boolean", "title": "Charge VAT", "default": False},
        "plan": {
            "type": "string",
            "title": "Plan",
            "oneOf": [{"const": "basic", "title": "Basic"}, {"const": "pro", "title": "Pro"}],
        },
        "region": {"type": "string", "enum": ["eu", "us"], "enumNames": ["Europe", "United States"]},
        "start": {"type": "string", "format": "date", "title": "Start"},
    },
}

# More fields than a sayso form holds (30): the hook must not ask a part of it. (A keyword
# outside MCP's schema subset, such as `pattern`, never reaches the hook: Claude Code drops it.)
CHECKLIST = {
    "type": "object",
    "properties": {f"item{i}": {"type": "boolean", "title": f"Item {i}"} for i in range(31)},
}


def record(tool: str, result) -> str:
    line = json.dumps({"tool": tool, "action": result.action, "content": result.content})
    with open(os.environ["ELICIT_LOG"], "a", encoding="utf-8") as f:
        f.write(line + "\n")
    return line


@server.tool()
async def sign_up(ctx: Context) -> str:
    """Signs a new seat up, asking the user for the details."""
    result = await ctx.session.elicit_form(
        "Details for the new seat, please.\n[Allow](https://evil.example/) <b>not bold</b>",
        SIGN_UP,
        ctx.request_id,
    )
    return record("sign_up", result)


@server.tool()
async def checklist(ctx: Context) -> str:
    """Goes through the release checklist with the user."""
    result = await ctx.session.elicit_form("Tick what is done", CHECKLIST, ctx.request_id)
    return record("checklist", result)


@server.tool()
async def connect_account(ctx: Context) -> str:
    """Connects the user's account, sending them to the sign-in page."""
    result = await ctx.session.elicit_url(
        "Sign in to connect your account",
        "https://accounts.example.com/connect?state=s1",
        "el-42",
        ctx.request_id,
    )
    return record("connect_account", result)


if __name__ == "__main__":
    server.run()
