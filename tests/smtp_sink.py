"""An aiosmtpd handler for the email tests: keeps every message it accepts in a directory.

    PYTHONPATH=tests python3 -m aiosmtpd -n -l 127.0.0.1:2525 -c smtp_sink.Sink /tmp/mails

Each message becomes `NNNNNN.json` (written atomically): the envelope, the headers, the raw
message, and the decoded text of every text/* part, so the Rust tests need no MIME parser.

Recipients are refused by the local part, to exercise a client's error handling:
`reject@…` gets a permanent 550, `busy@…` a transient 451, and mail to `slow@…` takes a
quarter of a second to accept (a slow server, for the crash tests).
"""

import asyncio

import email
import email.policy
import itertools
import json
import os


class Sink:
    def __init__(self, directory):
        self.directory = directory
        self.counter = itertools.count(1)
        os.makedirs(directory, exist_ok=True)

    @classmethod
    def from_cli(cls, parser, *args):
        if len(args) != 1:
            parser.error("Sink takes one argument: the directory to write messages to")
        return cls(args[0])

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        local = address.split("@", 1)[0].lower()
        if local == "reject":
            return "550 5.1.1 No such user here"
        if local == "busy":
            return "451 4.3.0 Try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if any(r.lower().startswith("slow@") for r in envelope.rcpt_tos):
            await asyncio.sleep(0.25)
        raw = envelope.original_content or envelope.content
        message = email.message_from_bytes(raw, policy=email.policy.default)
        parts = []
        for part in message.walk():
            if part.is_multipart():
                continue
            if part.get_content_maintype() == "text":
                parts.append(
                    {"content_type": part.get_content_type(), "body": part.get_content()}
                )
        record = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "headers": [[k, str(v)] for k, v in message.items()],
            "content_type": message.get_content_type(),
            "parts": parts,
            "raw": raw.decode("utf-8", errors="replace"),
        }
        name = "%06d" % next(self.counter)
        tmp = os.path.join(self.directory, name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(record, f)
        os.rename(tmp, os.path.join(self.directory, name + ".json"))
        return "250 Message accepted for delivery"
