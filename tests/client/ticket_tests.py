#!/usr/bin/env python3
"""Tests of the tickets the clients make (PROTOCOL.md 1.2, "Tickets"), run by ctest; none needs
the daemon (those that do come once it verifies tickets).

  ticket_tests.py CASE --client PATH [--verify PATH] [--example DIR]

ticket_cli:   `collide-client ticket` against an HS256 check written here from RFC 7515/7519 with
              Python's hmac (the header, the signature, every claim and the ttl), its key sources
              and refusals; the key is never in any output.
ticket_load:  `collide-client load --ticket-key`: each player's Hello (caught by a listener that
              reads the first frame and hangs up) carries its own ticket for its room and name;
              the backend's is an admin one.
ticket_cross: the Python example's mint_ticket and the C tool agree: libjwt (--verify, a small C
              program) accepts mint_ticket's tickets with the claims asked for and refuses them
              under another key, and the check here accepts both makers' tickets."""
import argparse
import base64
import hashlib
import hmac
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from client_tests import check, hello_stub, run  # noqa: E402

KEY = "k3y-that-must-never-be-printed"
B64URL = re.compile(r"^[A-Za-z0-9_-]+$")


class Refused(Exception):
    pass


def unb64url(part):
    if not B64URL.match(part):
        raise Refused("not base64url without padding: %r" % part)
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def verify(key, token):
    """The claims of an HS256 ticket signed with key (bytes or str); Refused otherwise."""
    if isinstance(key, str):
        key = key.encode()
    parts = token.split(".")
    if len(parts) != 3:
        raise Refused("%d parts" % len(parts))
    header = json.loads(unb64url(parts[0]))
    if header.get("alg") != "HS256" or header.get("typ", "JWT") != "JWT":
        raise Refused("header %s" % header)
    want = hmac.new(key, (parts[0] + "." + parts[1]).encode("ascii"), hashlib.sha256).digest()
    if not hmac.compare_digest(unb64url(parts[2]), want):
        raise Refused("signature")
    return header, json.loads(unb64url(parts[1]))


def refused(key, token):
    try:
        verify(key, token)
    except Refused:
        return True
    return False


def ticket(a, *args, env=None, key_file=None):
    """Runs `collide-client ticket`; returns (result, t0, t1), t0..t1 the seconds it ran in."""
    e = dict(os.environ)
    e.pop("COLLIDE_TICKET_KEY", None)
    e.update(env or {})
    t0 = int(time.time())
    r = run([a.client, "ticket", *args], env=e)
    t1 = int(time.time())
    for out in (r.stdout, r.stderr):
        check(KEY not in out and "never-be-printed" not in out, "the key is not in the output")
    return r, t0, t1


def write_key(directory, name, data):
    path = os.path.join(directory, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def case_ticket_cli(a):
    with tempfile.TemporaryDirectory() as d:
        key_file = write_key(d, "key", KEY.encode() + b"\n")
        r, t0, t1 = ticket(a, "--key-file", key_file, "--room", "arena-1", "--ttl", "90s", "--sub",
                           "alice", "--admin", "--max-bodies", "3")
        check(r.returncode == 0 and r.stdout.endswith("\n") and r.stdout.count("\n") == 1,
              "one ticket, one line on stdout")
        tok = r.stdout.strip()
        header, claims = verify(KEY, tok)
        check(header == {"alg": "HS256", "typ": "JWT"}, "header: HS256, typ JWT: %s" % header)
        iat = claims.get("iat")
        check(isinstance(iat, int) and t0 <= iat <= t1, "iat is the time of issue: %s" % claims)
        check(claims == {"room": "arena-1", "sub": "alice", "admin": True, "max_bodies": 3,
                         "iat": iat, "exp": iat + 90}, "every claim asked for, exp = iat + ttl: %s"
              % claims)
        check(refused(KEY + "x", tok) and refused(KEY[:-1], tok), "another key does not verify it")
        # The file's trailing newline was not part of the key (checked above), nor CR LF; bytes
        # that are not text are.
        r, _, _ = ticket(a, "--key-file", write_key(d, "crlf", KEY.encode() + b"\r\n\r\n"),
                         "--room", "r")
        check(r.returncode == 0 and not refused(KEY, r.stdout.strip()),
              "CR LF ends are dropped too")
        # Any bytes but line ends (the daemon's --ticket-key-file format: one key per line).
        binary = b"\x00\xffk\x01" + bytes(b for b in os.urandom(60) if b not in b"\r\n")
        r, _, _ = ticket(a, "--key-file", write_key(d, "bin", binary), "--room", "r")
        check(r.returncode == 0 and not refused(binary, r.stdout.strip()), "a binary key file")
        # A rotation's file, as the daemon reads it: the first key signs.
        r, _, _ = ticket(a, "--key-file", write_key(d, "two", b"\n" + KEY.encode() + b"\nold-key"
                                                   + b"x" * 32 + b"\n"), "--room", "r")
        check(r.returncode == 0 and not refused(KEY, r.stdout.strip()),
              "a two-key file: signed with its first key")
        ticket_cli_claims(a)
        ticket_cli_sources(a, d, key_file)
        ticket_cli_refusals(a, d, key_file)


def ticket_cli_claims(a):
    # The least: room, iat, exp, nothing else; the default ttl is a minute; "" is the default room.
    r, _, _ = ticket(a, "--room", "", env={"COLLIDE_TICKET_KEY": KEY})
    _, claims = verify(KEY, r.stdout.strip())
    check(sorted(claims) == ["exp", "iat", "room"] and claims["room"] == "" and
          claims["exp"] - claims["iat"] == 60, "the key from the environment; default ttl 60 s; no "
          "optional claim unasked: %s" % claims)
    r, _, _ = ticket(a, "--room", "default", "--ttl", "1500ms", env={"COLLIDE_TICKET_KEY": KEY})
    _, claims = verify(KEY, r.stdout.strip())
    check(claims["exp"] - claims["iat"] == 2 and claims["room"] == "default",
          "ttl rounded up to whole seconds: %s" % claims)
    r, _, _ = ticket(a, "--room", "r", "--ttl", "2m", "--nbf", "30s", "--max-bodies", "0",
                     env={"COLLIDE_TICKET_KEY": KEY})
    _, claims = verify(KEY, r.stdout.strip())
    check(claims["exp"] - claims["iat"] == 120 and claims["nbf"] - claims["iat"] == 30 and
          claims["max_bodies"] == 0 and "admin" not in claims,
          "nbf after the issue, max_bodies 0 kept, no admin unasked: %s" % claims)
    r, _, _ = ticket(a, "--room", "r", "--sub", "Zo\u00eb \"the\" \\ player",
                     env={"COLLIDE_TICKET_KEY": KEY})
    check(verify(KEY, r.stdout.strip())[1]["sub"] == "Zo\u00eb \"the\" \\ player" and
          r.stderr == "", "a sub with quotes, a backslash and UTF-8 survives the JSON")
    r, _, _ = ticket(a, "--room", "r", "--sub", "p" * 700, env={"COLLIDE_TICKET_KEY": KEY})
    check(r.returncode == 0 and verify(KEY, r.stdout.strip())[1]["sub"] == "p" * 700 and
          "--max-hello-frame" in r.stderr, "a ticket too long for a default Hello: made, with a "
          "warning")


def ticket_cli_sources(a, d, key_file):
    other = "another-key"
    r, _, _ = ticket(a, "--key", other, "--room", "r", env={"COLLIDE_TICKET_KEY": KEY})
    check(not refused(other, r.stdout.strip()), "--key wins over the environment")
    r, _, _ = ticket(a, "--key-file", key_file, "--room", "r", env={"COLLIDE_TICKET_KEY": other})
    check(not refused(KEY, r.stdout.strip()), "--key-file wins over the environment")
    big = write_key(d, "big", b"k" * 65536)
    r, _, _ = ticket(a, "--key-file", big, "--room", "r")
    check(r.returncode == 0 and not refused(b"k" * 65536, r.stdout.strip()), "a 64 KiB key")


def ticket_cli_refusals(a, d, key_file):
    def refuses(what, *args, env=None, stderr_has=""):
        r, _, _ = ticket(a, *args, env=env)
        check(r.returncode == 2 and r.stdout == "" and stderr_has in r.stderr,
              "refused, exit 2, nothing on stdout: " + what)

    refuses("no key at all", "--room", "r", stderr_has="no key")
    refuses("an empty environment key", "--room", "r", env={"COLLIDE_TICKET_KEY": ""},
            stderr_has="no key")
    refuses("--key and --key-file", "--key", KEY, "--key-file", key_file, "--room", "r",
            stderr_has="not both")
    refuses("an empty key file", "--key-file", write_key(d, "empty", b"\n"), "--room", "r",
            stderr_has="empty")
    refuses("a key file over 64 KiB", "--key-file", write_key(d, "huge", b"k" * 65537), "--room",
            "r", stderr_has="longer than")
    refuses("a missing key file, named", "--key-file", os.path.join(d, "nope"), "--room", "r",
            stderr_has=os.path.join(d, "nope"))
    refuses("no --room", "--key-file", key_file, stderr_has="--room")
    refuses("a bad room name", "--key-file", key_file, "--room", "a/b", stderr_has="--room")
    refuses("a room of 65 bytes", "--key-file", key_file, "--room", "r" * 65, stderr_has="--room")
    refuses("--ttl 0", "--key-file", key_file, "--room", "r", "--ttl", "0", stderr_has="--ttl")
    refuses("--max-bodies -1", "--key-file", key_file, "--room", "r", "--max-bodies", "-1",
            stderr_has="--max-bodies")
    refuses("nbf at or after exp", "--key-file", key_file, "--room", "r", "--ttl", "30s", "--nbf",
            "30s", stderr_has="--nbf")
    refuses("an operand", "--key-file", key_file, "--room", "r", "extra", stderr_has="extra")
    r = subprocess.run([a.client.encode(), b"ticket", b"--key-file", key_file.encode(), b"--room",
                        b"r", b"--sub", b"\xff\xfe"], capture_output=True, timeout=60)
    check(r.returncode == 2 and b"UTF-8" in r.stderr and r.stdout == b"",
          "a sub that is not UTF-8 is refused")
    r = run([a.client, "ticket", "--help"])
    check(r.returncode == 0 and "COLLIDE_TICKET_KEY" in r.stdout and "--key-file" in r.stdout,
          "ticket --help names the key's sources")
    r = run([a.client, "--help"])
    check("ticket" in r.stdout, "collide-client --help lists ticket")


def load_hellos(a, n, *args, key_file):
    """Runs load against a listener that keeps each Hello's name, room and token."""
    port, t, seen = hello_stub(n, keep=lambda h: h)
    r = run([a.client, "load", "--port", str(port), "--ramp", "0.2s", "--duration", "1s",
             "--stall-timeout", "1s", "--no-progress", "--ticket-key-file", key_file, *args])
    t.join(30)
    check(KEY not in r.stdout + r.stderr, "load does not print the key")
    return r, [(h[2][0].decode(), h[4][0].decode() if 4 in h else "", h[3][0].decode())
               for h in seen]


def case_ticket_load(a):
    with tempfile.TemporaryDirectory() as d:
        key_file = write_key(d, "key", KEY.encode() + b"\n")
        t0 = int(time.time())
        _, hellos = load_hellos(a, 5, "--clients", "5", "--rooms", "2", "--room-prefix", "arena.",
                                "--ticket-ttl", "90s", key_file=key_file)
        t1 = int(time.time())
        check(len(hellos) == 5, "five Hellos: %s" % [h[:2] for h in hellos])
        for name, room, tok in hellos:
            _, claims = verify(KEY, tok)
            check(claims["room"] == room and claims["sub"] == name and
                  claims["exp"] - claims["iat"] == 90 and t0 <= claims["iat"] <= t1 and
                  sorted(claims) == ["exp", "iat", "room", "sub"],
                  "%s's ticket: its room %s, its name, ttl 90 s, no admin: %s"
                  % (name, room, claims))
        check(len({h[2] for h in hellos}) == 5, "each player has its own ticket")
        check(sorted(h[:2] for h in hellos) == [("load-0", "arena.0"), ("load-1", "arena.1"),
                                                 ("load-2", "arena.0"), ("load-3", "arena.1"),
                                                 ("load-4", "arena.0")], "rooms round robin")
        _, hellos = load_hellos(a, 2, "--clients", "2", key_file=key_file)
        check(all(verify(KEY, tok)[1]["room"] == "" and room == "" and
                  verify(KEY, tok)[1]["exp"] - verify(KEY, tok)[1]["iat"] == 60
                  for _, room, tok in hellos), "without --rooms the tickets name room \"\"; "
              "default ttl 60 s")
        # The backend, with no --admin-token: an admin ticket for the first room.
        _, hellos = load_hellos(a, 3, "--clients", "2", "--rooms", "2", "--backend", "2",
                                key_file=key_file)
        backend = [h for h in hellos if h[0] == "load-backend"]
        check(len(backend) == 1, "the backend said Hello: %s" % [h[:2] for h in hellos])
        _, claims = verify(KEY, backend[0][2])
        check(claims["admin"] is True and claims["room"] == "load-0" == backend[0][1] and
              claims["sub"] == "load-backend", "the backend's ticket: admin of room load-0: %s"
              % claims)
        check(all("admin" not in verify(KEY, h[2])[1] for h in hellos if h[0] != "load-backend"),
              "the players' tickets are not admin ones")
        ticket_load_refusals(a, d, key_file)


def ticket_load_refusals(a, d, key_file):
    base = [a.client, "load", "--clients", "1", "--duration", "2s"]
    r = run(base + ["--ticket-key-file", key_file, "--token", "shared"])
    check(r.returncode == 2 and "--token" in r.stderr, "--ticket-key with --token is refused")
    r = run(base + ["--ticket-key", KEY, "--ticket-key-file", key_file])
    check(r.returncode == 2 and "not both" in r.stderr and KEY not in r.stderr,
          "--ticket-key with --ticket-key-file is refused")
    r = run(base + ["--ticket-ttl", "30s"])
    check(r.returncode == 2 and "--ticket-ttl" in r.stderr, "--ticket-ttl without a key is refused")
    r = run(base + ["--ticket-key-file", os.path.join(d, "nope")])
    check(r.returncode == 2 and "nope" in r.stderr, "a missing key file is refused, named")
    r = run(base + ["--backend", "1"])
    check(r.returncode == 2 and "--admin-token" in r.stderr and "--ticket-key" in r.stderr,
          "--backend without --admin-token or a ticket key is refused")
    r = run([a.client, "load", "--help"])
    check("--ticket-key-file" in r.stdout and "--ticket-ttl" in r.stdout, "load --help has them")


def libjwt(a, key_file, token):
    r = subprocess.run([a.verify, key_file, token], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return None
    header, claims = r.stdout.splitlines()
    return json.loads(header), json.loads(claims)


def case_ticket_cross(a):
    sys.path.insert(0, a.example)
    from collide_example import mint_ticket

    with tempfile.TemporaryDirectory() as d:
        key_file = write_key(d, "key", KEY.encode())
        wrong_file = write_key(d, "wrong", KEY.encode() + b"!")
        tok = mint_ticket(KEY, "arena-1", 60, sub="bob", admin=True, max_bodies=2, now=1700000000)
        got = libjwt(a, key_file, tok)
        check(got is not None and got[1] == {"room": "arena-1", "iat": 1700000000,
                                             "exp": 1700000060, "sub": "bob", "admin": True,
                                             "max_bodies": 2},
              "libjwt accepts mint_ticket's ticket, with its claims: %s" % (got,))
        check(libjwt(a, wrong_file, tok) is None, "libjwt refuses it under another key")
        check(verify(KEY, tok)[1] == got[1], "the Python check here reads the same claims")
        tok = mint_ticket(KEY.encode(), "", 0.5)
        _, claims = libjwt(a, key_file, tok)
        check(claims["room"] == "" and claims["exp"] - claims["iat"] == 1 and
              sorted(claims) == ["exp", "iat", "room"], "bytes key, ttl rounded up, no optional "
              "claim unasked: %s" % claims)
        tampered = tok.split(".")
        tampered[1] = mint_ticket(KEY, "arena-2", 60).split(".")[1]
        check(libjwt(a, key_file, ".".join(tampered)) is None and
              refused(KEY, ".".join(tampered)), "claims swapped under a signature: both refuse")
        # And the C tool's: libjwt (its own library) and the check here read the same claims,
        # those mint_ticket writes for the same arguments.
        r, _, _ = ticket(a, "--key-file", key_file, "--room", "arena-1", "--sub", "bob", "--admin",
                         "--max-bodies", "2")
        c_tok = r.stdout.strip()
        got = libjwt(a, key_file, c_tok)
        _, py_claims = verify(KEY, mint_ticket(KEY, "arena-1", 60, sub="bob", admin=True,
                                               max_bodies=2))

        def untimed(claims):
            return {k: v for k, v in claims.items() if k not in ("iat", "exp")}

        check(got is not None and verify(KEY, c_tok)[1] == got[1] and
              untimed(got[1]) == untimed(py_claims) and
              got[1]["exp"] - got[1]["iat"] == py_claims["exp"] - py_claims["iat"],
              "the C tool's ticket: libjwt, the check here and mint_ticket agree: %s" % (got,))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--client", required=True)
    ap.add_argument("--verify")
    ap.add_argument("--example")
    a = ap.parse_args()
    globals()["case_" + a.case](a)
    print("PASS", a.case)


if __name__ == "__main__":
    main()
