"""A person on Matrix, for the tests: a real client (matrix-nio) on the test's Synapse.

    person.py register HOMESERVER SECRET NAME...   shared-secret registration (stdlib only);
                                                   prints {"NAME": "@NAME:server", ...}
    person.py drive HOMESERVER USER PASSWORD       logs in, then reads one JSON command a line
                                                   on stdin and answers one JSON line each

The driver's commands ({"do": ..., ...}); each answers {"ok": true, ...} or {"error": "..."}:

    join       {"from": "@bot:server"}         wait for an invitation from that user, join
                                                the room; -> {"room", "is_direct"}
    join_room  {"room"}                         join a room by id (invited or not)
    message    {"room", "sender", "contains"}   wait for an m.room.message from sender in room
                                                whose body contains the text (edits ignored);
                                                -> {"event_id", "content"}
    edit       {"room", "event", "contains"}    wait for an edit (m.replace) of that event whose
                                                new body contains the text; -> {"sender",
                                                "event_id", "new_content"}
    reactions  {"room", "event", "sender",      the annotation keys sender placed on the event,
                "at_least"?}                    waiting until there are at least that many
    react      {"room", "event", "key"}         send an m.reaction; -> {"event_id"}
    reply      {"room", "event", "text"}        send a reply (m.in_reply_to); -> {"event_id"}
    send       {"room", "content", "type"?}     send any content as is; -> {"event_id"}
    name       {"displayname"}                  set this user's display name
    invite     {"room", "user"}                 invite someone into a room
    spam       {"room", "count"}                send that many m.notice messages
    quit

Every wait has "timeout" (seconds, default 30). Events are kept from the first sync on, so a
wait also finds what arrived before it was asked for.
"""

import asyncio
import hashlib
import hmac
import json
import sys
import time
import urllib.request


def register(homeserver, secret, names):
    out = {}
    url = homeserver.rstrip("/") + "/_synapse/admin/v1/register"
    for name in names:
        with urllib.request.urlopen(url) as r:
            nonce = json.load(r)["nonce"]
        password = name + "-password"
        mac = hmac.new(secret.encode(), digestmod=hashlib.sha1)
        mac.update(b"\x00".join([nonce.encode(), name.encode(), password.encode(), b"notadmin"]))
        body = json.dumps(
            {"nonce": nonce, "username": name, "password": password, "admin": False, "mac": mac.hexdigest()}
        ).encode()
        req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req) as r:
            out[name] = json.load(r)["user_id"]
    print(json.dumps(out))


class Person:
    def __init__(self, client):
        self.client = client
        self.since = None
        self.invites = {}  # room id -> the invite's events (raw)
        self.events = []  # (room id, raw event), in order

    async def sync_once(self):
        import nio

        resp = await self.client.sync(timeout=1000, since=self.since, full_state=self.since is None)
        if isinstance(resp, nio.SyncError):
            raise RuntimeError(f"sync failed: {resp.message}")
        self.since = resp.next_batch
        for room_id, info in resp.rooms.invite.items():
            # nio keeps an invite event's content beside its source, not in it.
            self.invites[room_id] = [
                {**e.source, "content": getattr(e, "content", {}) or {}} for e in info.invite_state
            ]
        for room_id, info in resp.rooms.join.items():
            for e in info.timeline.events:
                self.events.append((room_id, e.source))

    async def until(self, find, timeout):
        deadline = time.monotonic() + timeout
        while True:
            found = find()
            if found is not None:
                return found
            if time.monotonic() > deadline:
                raise TimeoutError("not seen in time")
            await self.sync_once()

    async def send(self, room, event_type, content):
        import nio

        resp = await self.client.room_send(room, event_type, content, ignore_unverified_devices=True)
        if isinstance(resp, nio.RoomSendError):
            raise RuntimeError(f"send failed: {resp.status_code} {resp.message}")
        return {"event_id": resp.event_id}

    async def run(self, cmd):
        import nio

        do = cmd["do"]
        timeout = cmd.get("timeout", 30)
        if do == "join":

            def invited():
                for room_id, state in self.invites.items():
                    for e in state:
                        c = e.get("content", {})
                        if (
                            e.get("type") == "m.room.member"
                            and e.get("state_key") == self.client.user_id
                            and e.get("sender") == cmd["from"]
                            and c.get("membership") == "invite"
                        ):
                            return room_id, bool(c.get("is_direct"))
                return None

            room_id, is_direct = await self.until(invited, timeout)
            resp = await self.client.join(room_id)
            if isinstance(resp, nio.JoinError):
                raise RuntimeError(f"join failed: {resp.message}")
            self.invites.pop(room_id, None)
            return {"room": room_id, "is_direct": is_direct}
        if do == "join_room":
            resp = await self.client.join(cmd["room"])
            if isinstance(resp, nio.JoinError):
                raise RuntimeError(f"join failed: {resp.message}")
            return {"room": cmd["room"]}
        if do == "message":

            def message():
                for room_id, e in self.events:
                    c = e.get("content", {})
                    if (
                        room_id == cmd["room"]
                        and e.get("type") == "m.room.message"
                        and e.get("sender") == cmd["sender"]
                        and c.get("m.relates_to", {}).get("rel_type") != "m.replace"
                        and cmd.get("contains", "") in c.get("body", "")
                    ):
                        return {"event_id": e["event_id"], "content": c}
                return None

            return await self.until(message, timeout)
        if do == "edit":

            def edit():
                for room_id, e in self.events:
                    c = e.get("content", {})
                    rel = c.get("m.relates_to", {})
                    new = c.get("m.new_content", {})
                    if (
                        room_id == cmd["room"]
                        and e.get("type") == "m.room.message"
                        and rel.get("rel_type") == "m.replace"
                        and rel.get("event_id") == cmd["event"]
                        and cmd.get("contains", "") in new.get("body", "")
                    ):
                        return {"sender": e["sender"], "event_id": e["event_id"], "new_content": new}
                return None

            return await self.until(edit, timeout)
        if do == "reactions":

            def keys():
                found = [
                    e["content"]["m.relates_to"].get("key")
                    for room_id, e in self.events
                    if room_id == cmd["room"]
                    and e.get("type") == "m.reaction"
                    and e.get("sender") == cmd["sender"]
                    and e.get("content", {}).get("m.relates_to", {}).get("event_id") == cmd["event"]
                ]
                return found if len(found) >= cmd.get("at_least", 0) else None

            await self.sync_once()
            return {"keys": await self.until(keys, timeout)}
        if do == "react":
            content = {"m.relates_to": {"rel_type": "m.annotation", "event_id": cmd["event"], "key": cmd["key"]}}
            return await self.send(cmd["room"], "m.reaction", content)
        if do == "reply":
            content = {
                "msgtype": "m.text",
                "body": cmd["text"],
                "m.relates_to": {"m.in_reply_to": {"event_id": cmd["event"]}},
            }
            return await self.send(cmd["room"], "m.room.message", content)
        if do == "send":
            return await self.send(cmd["room"], cmd.get("type", "m.room.message"), cmd["content"])
        if do == "name":
            resp = await self.client.set_displayname(cmd["displayname"])
            if isinstance(resp, nio.ProfileSetDisplayNameError):
                raise RuntimeError(f"set_displayname failed: {resp.message}")
            return {}
        if do == "spam":
            for i in range(cmd["count"]):
                await self.send(cmd["room"], "m.room.message", {"msgtype": "m.notice", "body": f"filler {i}"})
            return {}
        if do == "invite":
            resp = await self.client.room_invite(cmd["room"], cmd["user"])
            if isinstance(resp, nio.RoomInviteError):
                raise RuntimeError(f"invite failed: {resp.message}")
            return {}
        raise ValueError(f"unknown command {do!r}")


async def drive(homeserver, user, password):
    import nio

    client = nio.AsyncClient(homeserver, user)
    login = await client.login(password, device_name="sayso test person")
    if isinstance(login, nio.LoginError):
        print(json.dumps({"error": f"login failed: {login.message}"}), flush=True)
        return
    person = Person(client)
    await person.sync_once()
    print(json.dumps({"ok": True, "user_id": client.user_id}), flush=True)
    loop = asyncio.get_running_loop()
    try:
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line or not line.strip():
                break
            cmd = json.loads(line)
            if cmd.get("do") == "quit":
                break
            try:
                out = {"ok": True, **(await person.run(cmd))}
            except Exception as e:  # reported to the test, which fails with it
                out = {"error": f"{cmd.get('do')}: {type(e).__name__}: {e}"}
            print(json.dumps(out), flush=True)
    finally:
        await client.close()


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "register":
        register(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif len(sys.argv) == 5 and sys.argv[1] == "drive":
        asyncio.run(drive(*sys.argv[2:5]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
