#!/usr/bin/env python3
"""Tickets (protocol 1.2, PROTOCOL.md "Tickets: who may join which room"; issue 31) over real
sockets: JWTs signed HS256 with --ticket-key, minted here with the standard library alone (hmac,
hashlib, base64, json), the way a game's backend in any language would.

Every rule as written, each alone over TCP, with its fatal Error{UNAUTHENTICATED} naming the check;
a selection over WebSocket and over UDP (pyenet); two players with tickets for two rooms each see
only theirs; an admin by ticket is FORBIDDEN the rooms' messages and reaches no other room; the
shared token beside tickets and under --ticket-required on; --ticket-key-file and a rotation's two
keys; max_bodies; sub in /rooms and in the log; and the key in no log line, no reply, no ops page,
and not in the daemon's command line or environment once read."""

import base64
import hashlib
import hmac
import json
import os
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, describe, test  # noqa: E402

KEY = "itest-ticket-key-0123456789abcdef-XYZ"
OLD_KEY = "itest-previous-key-fedcba9876543210-QRS"
OTHER_KEY = "a-key-this-daemon-never-heard-of-000000"
ADMIN = "adm1n"
SHARED = "shared-token"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def mint(claims, key=KEY, header=None, digest=hashlib.sha256, raw_payload=None):
    """A compact JWS: base64url(header).base64url(payload).base64url(HMAC) (RFC 7515)."""
    h = b64url(json.dumps(header or {"alg": "HS256", "typ": "JWT"}).encode())
    p = b64url(raw_payload if raw_payload is not None else json.dumps(claims).encode())
    signing_input = (h + "." + p).encode()
    sig = hmac.new(key.encode(), signing_input, digest).digest() if digest else b""
    return h + "." + p + "." + b64url(sig)


def ticket(room, ttl=60, key=KEY, **claims):
    """A ticket for room, expiring ttl seconds from now (the daemon's clock is this machine's)."""
    body = {"room": room, "exp": int(time.time()) + ttl}
    body.update(claims)
    return mint(body, key=key)


def daemon(*args, **kw):
    """collided with tickets on (and the admin token), without the overload detector: under ASan on
    2 shared cores ticks run late, and "at capacity" is not what this file checks."""
    return ct.Daemon(["--ticket-key", KEY, "--admin-token", ADMIN, "--overload-window-ms", "0",
                      *args], **kw)


def expect_refused(c, token, word, room=None, what=None):
    """The Hello with token is refused: Error{UNAUTHENTICATED, fatal}, "ticket refused: <word>...",
    then the close; the message holds no key."""
    what = what or "ticket refused for %s" % word
    sm = c.hello_refused("UNAUTHENTICATED", room=room, token=token, what=what)
    msg = sm.error.message
    check(msg.startswith("ticket refused: " + word),
          "%s: the message must name the check %r, got %r" % (what, word, msg))
    for k in (KEY, OLD_KEY, OTHER_KEY):
        check(k not in msg, "%s: the message must not hold a key: %r" % (what, msg))
    return msg


def players_of(d):
    status, text = d.http_get("/rooms")
    check(status == 200, "GET /rooms must be 200, got %d" % status)
    doc = json.loads(text)
    check(isinstance(doc.get("players"), list) and "players_total" in doc,
          "/rooms must list the players: %s" % text[:300])
    return doc


# ---------------------------------------------------------------------------------------------
# TCP: what a ticket grants


@test
def ticket_welcomes_with_its_claims():
    d = daemon("--max-bodies-per-client", "4", http=True, world=ct.write_world())
    c = d.client()
    w = c.hello(token=ticket("arena", sub="player-7", max_bodies=1), name="self-named",
                room="arena")
    check("tickets" in w.features, "Welcome.features must hold \"tickets\": %s" % list(w.features))
    check(w.room == "arena" and not w.admin, "a player of room arena: %s" % w)
    # max_bodies lowers the per-client limit, and Welcome says the limit granted.
    check(w.max_bodies_per_client == 1, "max_bodies 1 lowers the limit of 4: Welcome says %d"
          % w.max_bodies_per_client)
    c.spawn_ok(ct.circle(1), 0, 0)
    sm = c.spawn(ct.circle(1), 10, 0)
    check(kind_of(sm) == "error" and sm.error.code == ct.code_of("LIMIT_EXCEEDED"),
          "a second body is over max_bodies 1: %s" % describe(sm))
    # ... and never raises it.
    c2 = d.client()
    w2 = c2.hello(token=ticket("arena", max_bodies=100), room="arena")
    check(w2.max_bodies_per_client == 4, "max_bodies 100 never raises the limit of 4: %d"
          % w2.max_bodies_per_client)
    # sub is the client's name: in the log and in GET /rooms.
    check(d.wait_log(r"event=client_hello\b.*name=player-7 admin=0 room=arena ticket=1"),
          "the client_hello line names the client by its sub\n%s" % d.log_tail())
    doc = players_of(d)
    names = {(p["room"], p["name"], p["ticket"]) for p in doc["players"]}
    check(("arena", "player-7", True) in names, "/rooms lists player-7 in arena: %s" % doc)
    check(doc["players_total"] == 2 and doc["players_truncated"] is False,
          "two players, all listed: %s" % doc)
    for r in doc["rooms"]:
        check(set(r) == {"name", "clients", "bodies", "tick", "auto", "tick_p99_ms"},
              "a room's fields stay PROTOCOL.md's six: %s" % r)
    # The same ticket again, on a new connection (a reconnect): welcomed.
    c.close()
    c3 = d.client()
    c3.hello(token=ticket("arena", sub="player-7", max_bodies=1), room="arena")
    d.stop_and_check()


@test
def no_key_no_feature():
    d = ct.Daemon([])
    w = d.client().hello()
    check("tickets" not in w.features, "no --ticket-key: no \"tickets\" in %s" % list(w.features))
    d.stop_and_check()


# ---------------------------------------------------------------------------------------------
# TCP: each rule alone


@test
def room_rule():
    d = daemon()
    # required
    expect_refused(d.client(), mint({"exp": int(time.time()) + 60}), "format", room="arena")
    # the Hello's room must equal it
    msg = expect_refused(d.client(), ticket("arena"), "room", room="lobby")
    check("arena" in msg and "lobby" in msg, "the refusal names both rooms: %r" % msg)
    expect_refused(d.client(), ticket("arena"), "room", room=None, what="arena's ticket, no room")
    # "" in Hello is `default`, and so is "" in the ticket
    for claim, hello_room in (("default", None), ("default", ""), ("", "default"), ("", None)):
        w = d.client().hello(token=ticket(claim), room=hello_room)
        check(w.room == "default", "a ticket for %r, Hello.room %r: the room default, got %r"
              % (claim, hello_room, w.room))
    d.stop_and_check()


@test
def clock_rules_with_leeway():
    d = daemon("--ticket-leeway-s", "5")
    now = int(time.time())
    expect_refused(d.client(), mint({"room": "a"}), "format", room="a")  # exp required
    expect_refused(d.client(), mint({"room": "a", "exp": now - 60}), "expired", room="a")
    # within the leeway: expired 2 s ago, 5 s allowed
    d.client().hello(token=mint({"room": "a", "exp": now - 2}), room="a")
    expect_refused(d.client(), mint({"room": "a", "exp": now + 60, "nbf": now + 60}),
                   "not yet valid", room="a")
    d.client().hello(token=mint({"room": "a", "exp": now + 60, "nbf": now + 2}), room="a")
    expect_refused(d.client(), mint({"room": "a", "exp": now + 60, "iat": now + 60}),
                   "issued in the future", room="a")
    d.client().hello(token=mint({"room": "a", "exp": now + 60, "iat": now + 2, "nbf": now - 9}),
                     room="a")
    # RFC 7519's NumericDate may be a real (PyJWT passes time.time() through as it is)
    t = time.time()
    d.client().hello(token=mint({"room": "a", "exp": t + 60.5, "iat": t, "nbf": t - 0.5}),
                     room="a")
    expect_refused(d.client(), mint({"room": "a", "exp": t - 60.25}), "expired", room="a")
    d.stop_and_check()


@test
def claim_types():
    d = daemon()
    now = int(time.time())
    for claims, name in (({"room": "a", "exp": str(now + 60)}, "exp"),
                         ({"room": 7, "exp": now + 60}, "room"),
                         ({"room": "a", "exp": now + 60, "admin": "yes"}, "admin"),
                         ({"room": "a", "exp": now + 60, "admin": 1}, "admin"),
                         ({"room": "a", "exp": now + 60, "max_bodies": -1}, "max_bodies"),
                         ({"room": "a", "exp": now + 60, "max_bodies": 2.5}, "max_bodies"),
                         ({"room": "a", "exp": now + 60, "sub": 42}, "sub"),
                         ({"room": "a", "exp": now + 60, "nbf": "0"}, "nbf"),
                         ({"room": "a", "exp": now + 60, "iat": None}, "iat")):
        msg = expect_refused(d.client(), mint(claims), "format", room="a",
                             what="claim %s = %r" % (name, claims[name]))
        check(name in msg, "the refusal names the claim %s: %r" % (name, msg))
    d.stop_and_check()


@test
def signature_and_algorithms():
    d = daemon()
    claims = {"room": "a", "exp": int(time.time()) + 60, "admin": True}
    expect_refused(d.client(), mint(claims, key=OTHER_KEY), "signature", room="a")
    # tampered: the payload changed, the signature kept
    good = mint(claims)
    forged = mint(dict(claims, room="b"))
    forged = forged.rsplit(".", 1)[0] + "." + good.rsplit(".", 1)[1]
    expect_refused(d.client(), forged, "signature", room="b")
    # alg none: unsigned, or with any signature
    expect_refused(d.client(), mint(claims, header={"alg": "none"}, digest=None), "format",
                   room="a", what="alg none, no signature")
    expect_refused(d.client(), mint(claims, header={"alg": "none", "typ": "JWT"}), "algorithm",
                   room="a", what="alg none with a signature")
    # other algorithms, even under our key
    expect_refused(d.client(), mint(claims, header={"alg": "HS512", "typ": "JWT"},
                                    digest=hashlib.sha512), "algorithm", room="a",
                   what="HS512 under the ticket key")
    expect_refused(d.client(), mint(claims, header={"alg": "RS256", "typ": "JWT"}), "algorithm",
                   room="a", what="an HMAC labelled RS256")
    expect_refused(d.client(), mint(claims, header={"alg": "hs256"}), "algorithm", room="a",
                   what="hs256")
    # the right one, for contrast
    d.client().hello(token=mint(claims), room="a")
    d.stop_and_check()


@test
def malformed_and_too_long():
    d = daemon("--ticket-max-bytes", "200")
    now = int(time.time())
    good = mint({"room": "a", "exp": now + 60})
    h, p, s = good.split(".")
    for token, what in ((h + "." + p, "one dot"),
                        (h + "." + p + "." + s + ".x", "three dots"),
                        (h + "!." + p + "." + s, "a byte outside base64url"),
                        (h + "." + p + "=." + s, "base64 padding"),
                        (b64url(b"hello") + "." + p + "." + s, "a header that is not JSON"),
                        (mint(None, raw_payload=b"not json"), "a payload that is not JSON")):
        expect_refused(d.client(), token, "format", room="a", what=what)
    # past --ticket-max-bytes: refused before any parsing (not even a token)
    long_token = mint({"room": "a", "exp": now + 60, "sub": "x" * 300})
    check(len(long_token) > 200, "the long ticket is over the bound")
    msg = expect_refused(d.client(), long_token, "size", room="a")
    check("200" in msg, "the refusal says the bound: %r" % msg)
    expect_refused(d.client(), "!" * 201, "size", room="a", what="201 bytes of junk")
    d.client().hello(token=good, room="a")
    d.stop_and_check()


# ---------------------------------------------------------------------------------------------
# Rooms


def positions(c):
    return sorted((round(st["x"]), round(st["y"])) for st in c.view.values())


@test
def two_players_two_rooms_each_sees_only_theirs():
    d = daemon("--threads", "2", *ct.WHOLE_WORLD_VIEW, world=ct.write_world())
    red = d.client()
    red.hello(token=ticket("red", sub="r1"), room="red")
    blue = d.client()
    blue.hello(token=ticket("blue", sub="b1"), room="blue")
    for c in (red, blue):
        c.send(ct.msg_set_view(c.rid(), 0, 0, 1000, 1000))
    red.spawn_ok(ct.circle(2), -100, 0)
    blue.spawn_ok(ct.circle(2), 100, 0)
    red.sync()
    blue.sync()
    red.sync()
    check(positions(red) == [(-100, 0)], "red sees red's body only: %s" % positions(red))
    check(positions(blue) == [(100, 0)], "blue sees blue's body only: %s" % positions(blue))
    # Each ticket admits to its own room only.
    expect_refused(d.client(), ticket("red", sub="r1"), "room", room="blue")
    d.stop_and_check()


@test
def admin_by_ticket_is_admin_of_its_room_only():
    d = daemon("--world-dir", ct.world_dir(), *ct.WHOLE_WORLD_VIEW, http=True,
               world=ct.write_world())
    blue = d.client()
    blue.hello(token=ticket("blue"), room="blue")
    b = blue.spawn_ok(ct.circle(2), 100, 0)
    red_player = d.client()
    red_player.hello(token=ticket("red"), room="red")
    r = red_player.spawn_ok(ct.circle(2), -100, 0)
    boss = d.client()
    w = boss.hello(token=ticket("red", admin=True, sub="red-boss"), room="red")
    check(w.admin, "an admin claim makes Welcome.admin true")
    boss.send(ct.msg_set_view(boss.rid(), 0, 0, 1000, 1000))
    # Admin of its room: statics, and another player's body there.
    boss.spawn_ok(ct.box(2, 2), 0, 300, kind=ct.pb.BODY_KIND_STATIC)
    boss.move(r, 0, 30)
    red_player.recv_until(lambda m: kind_of(m) == "snapshot" and r in red_player.view and
                          red_player.view[r]["y"] > 1, what="the red body moved by its admin")
    # Never of the rooms: CreateRoom, CloseRoom (its own or another) and ListRooms.
    for sm, what in ((boss.create_room("green"), "CreateRoom"),
                     (boss.close_room("blue"), "CloseRoom of another room"),
                     (boss.close_room("red"), "CloseRoom of its own room"),
                     (boss.list_rooms(), "ListRooms")):
        check(kind_of(sm) == "error" and sm.error.code == ct.code_of("FORBIDDEN") and
              not sm.error.fatal, "%s by an admin by ticket: FORBIDDEN, got %s"
              % (what, describe(sm)))
    boss.assert_open("after the FORBIDDEN rooms messages")
    # Blue's body is no body of red: an intent for its id cannot reach it.
    blue.sync()
    x0 = blue.view[b]["x"]
    boss.move(b, 0, 50, rid=boss.rid())
    boss.pump(0.3)
    blue.sync()
    blue.sync()
    check(abs(blue.view[b]["x"] - x0) < 1e-3 and abs(blue.view[b]["y"]) < 1e-3,
          "red's admin cannot move blue's body: %s" % blue.view[b])
    check("blue" in d.room_names() and "red" in d.room_names(), "both rooms still open")
    # The admin token is an admin of the rooms.
    adm = d.client()
    adm.hello(token=ADMIN)
    check(kind_of(adm.list_rooms()) == "room_list", "the admin token may ListRooms")
    d.stop_and_check()


# ---------------------------------------------------------------------------------------------
# Tokens beside tickets


@test
def shared_token_beside_tickets_and_ticket_required():
    d = daemon("--token", SHARED)
    d.client().hello(token=SHARED)
    d.client().hello(token=ticket("a"), room="a")
    d.client().hello(token=ADMIN)
    c = d.client()
    sm = c.hello_refused("UNAUTHENTICATED", token="wrong-token-not-a-jwt")
    check("format" in sm.error.message, "any other token is a ticket: %r" % sm.error.message)
    d.stop_and_check()

    d = daemon("--token", SHARED, "--ticket-required", "on")
    for token in (SHARED, None):
        sm = d.client().hello_refused("UNAUTHENTICATED", token=token,
                                      what="--ticket-required on, token %r" % token)
        check("ticket is required" in sm.error.message, "the refusal says why: %r"
              % sm.error.message)
    w = d.client().hello(token=ticket("a"), room="a")
    check("tickets" in w.features, "feature tickets")
    w = d.client().hello(token=ADMIN, room="a")
    check(w.admin, "--admin-token keeps working under --ticket-required on")
    d.stop_and_check()


@test
def ticket_required_needs_a_key():
    p = subprocess.run([ct.OPTS.collided, "--ticket-required", "on", "--port", "0"],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 2 and "--ticket-required on needs a ticket key" in p.stderr,
          "--ticket-required on without a key: exit 2 and why, got %d %r"
          % (p.returncode, p.stderr))


# ---------------------------------------------------------------------------------------------
# Keys: the file, the rotation, the secret


def key_file(text):
    fd, path = tempfile.mkstemp(prefix="collide-itest-ticket-keys-")
    with os.fdopen(fd, "w", newline="") as f:
        f.write(text)
    ct._TEMP_FILES.append(path)
    return path


@test
def key_file_and_rotation():
    # The new key and the old one, as a container's secret: CRLF, a trailing newline.
    path = key_file(KEY + "\r\n" + OLD_KEY + "\r\n")
    d = ct.Daemon(["--ticket-key-file", path])
    d.client().hello(token=ticket("a", key=KEY), room="a")
    d.client().hello(token=ticket("a", key=OLD_KEY, sub="old-one"), room="a")
    check(d.wait_log(r"event=client_hello\b.*name=old-one .*ticket=2"),
          "a ticket under the second key logs ticket=2\n%s" % d.log_tail())
    expect_refused(d.client(), ticket("a", key=OTHER_KEY), "signature", room="a")
    d.stop_and_check()
    # The old key retired: its tickets are refused.
    d = ct.Daemon(["--ticket-key-file", key_file(KEY + "\n")])
    expect_refused(d.client(), ticket("a", key=OLD_KEY), "signature", room="a")
    d.client().hello(token=ticket("a"), room="a")
    d.stop_and_check()
    # --ticket-key twice: the same rotation from the command line.
    d = ct.Daemon(["--ticket-key", KEY, "--ticket-key", OLD_KEY])
    d.client().hello(token=ticket("a", key=OLD_KEY), room="a")
    d.client().hello(token=ticket("a", key=KEY), room="a")
    d.stop_and_check()
    # A missing file: the daemon does not start, and says which file.
    p = subprocess.run([ct.OPTS.collided, "--ticket-key-file", "/nonexistent/collide-key",
                        "--port", "0"], capture_output=True, text=True, timeout=30)
    check(p.returncode == 2 and "/nonexistent/collide-key" in p.stderr,
          "a missing key file: exit 2 naming it, got %d %r" % (p.returncode, p.stderr))


@test
def key_never_shown():
    # Debug logging: every line the daemon can write about a Hello.
    d = daemon("--ticket-key", OLD_KEY, "--log-level", "debug", http=True, ws=True)
    now = int(time.time())
    refused = [mint({"room": "a", "exp": now + 60}, key=OTHER_KEY),
               mint({"room": "a", "exp": now - 60}),
               mint({"room": "b", "exp": now + 60}, key=OLD_KEY),
               mint({"room": "a", "exp": now + 60}, header={"alg": "HS512"},
                    digest=hashlib.sha512),
               KEY, OLD_KEY, KEY + "." + KEY + "." + KEY]
    for token in refused:
        d.client().hello_refused("UNAUTHENTICATED", room="a", token=token)
    d.client().hello(token=ticket("a", sub="someone"), room="a")
    d.ws_client().hello(token=ticket("a"), room="a")
    pages = [d.http_get(p)[1] for p in ("/metrics", "/rooms", "/healthz")]
    # Not in the command line nor in the environment, once read.
    with open("/proc/%d/cmdline" % d.proc.pid, "rb") as f:
        cmdline = f.read()
    d.stop_and_check()
    text = d.log_text()
    check("ticket_refused" in text, "the refusals are logged")
    for k in (KEY, OLD_KEY):
        check(k not in text, "a ticket key appears in the daemon's log:\n%s" % d.log_tail())
        check(all(k not in page for page in pages), "a ticket key appears on an ops page")
        check(k.encode() not in cmdline, "a ticket key is still in /proc/PID/cmdline: %r"
              % cmdline)
    # From the environment (a container's variable): gone from /proc/PID/environ once read.
    d = ct.Daemon([], env_extra={"COLLIDE_TICKET_KEY": KEY})
    d.client().hello(token=ticket("a"), room="a")
    with open("/proc/%d/environ" % d.proc.pid, "rb") as f:
        environ = f.read()
    check(KEY.encode() not in environ, "the key is still in /proc/PID/environ")
    d.stop_and_check()
    check(KEY not in d.log_text(), "a ticket key appears in the daemon's log")


# ---------------------------------------------------------------------------------------------
# WebSocket and UDP: the same checks, whatever the transport


@test
def over_websocket():
    d = daemon(ws=True)
    w = d.ws_client().hello(token=ticket("arena", max_bodies=2), room="arena")
    check(w.room == "arena" and w.max_bodies_per_client == 2 and "tickets" in w.features,
          "a ticket over WebSocket: %s" % w)
    now = int(time.time())
    expect_refused(d.ws_client(), mint({"room": "arena", "exp": now - 60}), "expired",
                   room="arena", what="expired, over WebSocket")
    expect_refused(d.ws_client(), ticket("arena"), "room", room="lobby",
                   what="another room, over WebSocket")
    expect_refused(d.ws_client(), ticket("arena", key=OTHER_KEY), "signature", room="arena",
                   what="another key, over WebSocket")
    boss = d.ws_client()
    boss.hello(token=ticket("arena", admin=True), room="arena")
    sm = boss.list_rooms()
    check(kind_of(sm) == "error" and sm.error.code == ct.code_of("FORBIDDEN"),
          "ListRooms by an admin by ticket over WebSocket: FORBIDDEN, got %s" % describe(sm))
    d.stop_and_check()


@test
def over_udp():
    from udp_client import UdpClient
    d = daemon(udp=True)
    c = UdpClient(d.udp_port)
    w = c.hello(token=ticket("arena", max_bodies=1, sub="udp-player"), room="arena")
    check(w.room == "arena" and w.max_bodies_per_client == 1 and "tickets" in w.features,
          "a ticket over UDP: %s" % w)
    check(d.wait_log(r"event=client_hello\b.*name=udp-player .*ticket=1"),
          "sub names the UDP client in the log")
    now = int(time.time())
    for token, word in ((mint({"room": "arena", "exp": now - 60}), "expired"),
                        (ticket("arena", key=OTHER_KEY), "signature"),
                        (ticket("lobby"), "room")):
        u = UdpClient(d.udp_port)
        u.send(ct.msg_hello(1, token=token, room="arena"))
        ch, sm = u.message("error", "the refusal (%s) over UDP" % word)
        check(ch == 0 and sm.error.code == ct.code_of("UNAUTHENTICATED") and sm.error.fatal and
              sm.error.message.startswith("ticket refused: " + word),
              "%s over UDP: Error{UNAUTHENTICATED, fatal} on channel 0, got %s"
              % (word, describe(sm)))
        e = u.until(lambda e: e[0] == "disconnect", "the disconnect after the fatal error")
        check(e[2] == ct.code_of("UNAUTHENTICATED"), "disconnect data is the error code: %s"
              % (e,))
    boss = UdpClient(d.udp_port)
    boss.hello(token=ticket("arena", admin=True), room="arena")
    boss.send(ct.msg_list_rooms(9))
    ch, sm = boss.message("error", "ListRooms' refusal over UDP")
    check(sm.error.code == ct.code_of("FORBIDDEN") and not sm.error.fatal,
          "ListRooms by an admin by ticket over UDP: FORBIDDEN, got %s" % describe(sm))
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()
