#!/usr/bin/env python3
"""Filters, sensors and contact events over the wire (protocol 1.1, PROTOCOL.md "Filters, sensors,
contact events"): SpawnBody.category/mask/sensor decide which bodies block each other (statics
included) and come back in BodyState; a sensor neither blocks nor is blocked; Snapshot.contacts
and Snapshot.sensor_events reach the owners of the moving bodies involved and admins that said
Hello.all_events, nobody else; Welcome.features lists "filters", "sensors", "events";
--max-pending-events is a flag. (A snapshot dropped for a slow reader keeps its events: the
kernel buffers megabytes before the daemon drops anything, so that is tested socket-free against
the real server in tests/net/test_net_events.c.)"""

import math
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, kind_of, describe, test  # noqa: E402

ADMIN = "adm1n"
ALL = 0xFFFFFFFF


def spawn_filtered(c, shape, x, y, kind=None, category=0, mask=0, sensor=False):
    rid = c.rid()
    m = ct.msg_spawn(rid, shape, x, y, kind)
    m.spawn.category = category
    m.spawn.mask = mask
    m.spawn.sensor = sensor
    c.send(m)
    sm = c.reply(rid)
    check(kind_of(sm) == "spawned", "filtered spawn must succeed, got %s" % describe(sm))
    return sm.spawned.body_id


def hello_all_events(c, token, all_events=True):
    m = ct.msg_hello(1, token=token, name="watcher")
    m.hello.all_events = all_events
    c.send(m)
    sm = c.recv_until(lambda m: kind_of(m) != "snapshot", what="the reply to Hello")
    check(kind_of(sm) == "welcome", "Hello must be answered by Welcome, got %s" % describe(sm))
    c.welcome = sm.welcome
    c.client_id = sm.welcome.client_id
    return sm.welcome


class Events:
    """The events a client's snapshots carried, read for a while."""

    def __init__(self):
        self.contacts = []
        self.sensor = []
        self.bodies = {}

    def pump(self, c, seconds):
        def keep(m):
            if kind_of(m) == "snapshot":
                self.contacts += list(m.snapshot.contacts)
                self.sensor += list(m.snapshot.sensor_events)
                for b in m.snapshot.bodies:
                    if b.HasField("shape"):
                        self.bodies[b.id] = b
            return False
        try:
            c.recv_until(keep, timeout=seconds)
        except ct.TestFailure:
            pass  # the time ran out: what was read is kept


def daemon():
    d = ct.Daemon(["--admin-token", ADMIN] + ct.WHOLE_WORLD_VIEW, world=ct.write_world())
    admin = d.client()
    admin.hello(token=ADMIN)
    return d, admin


@test
def features_listed():
    d, admin = daemon()
    for f in ("filters", "sensors", "events"):
        check(f in admin.welcome.features, "Welcome.features must list %r: %s" % (
            f, list(admin.welcome.features)))
    d.stop_and_check()


@test
def filters_decide_who_blocks():
    """A wall of category 2: a mover whose mask leaves 2 out goes through it, a default one is
    stopped; two movers that do not interact pass through each other. The filters come back in
    BodyState (0 = the default)."""
    d, admin = daemon()
    wall = spawn_filtered(admin, ct.box(1, 20), 10, 0, kind=ct.pb.BODY_KIND_STATIC, category=2)
    p = d.client()
    p.hello()
    ghost = spawn_filtered(p, ct.box(1, 1), 0, 5, mask=1)
    solid = p.spawn_ok(ct.box(1, 1), 0, -5)
    a = spawn_filtered(p, ct.box(1, 1), 20, 30, category=4, mask=4)
    b = spawn_filtered(p, ct.box(1, 1), 30, 30, category=8, mask=ALL)
    for body, vx in ((ghost, 30), (solid, 30), (a, 30), (b, -30)):
        p.move(body, vx, 0)
    ev = Events()
    ev.pump(p, 1.5)
    p.sync()
    check(p.view[ghost]["x"] > 15, "a mover whose mask leaves the wall's category out must go "
          "through it: x %.3f" % p.view[ghost]["x"])
    check(p.view[solid]["x"] < 8.01, "a default mover must be stopped by the wall: x %.3f" %
          p.view[solid]["x"])
    check(p.view[a]["x"] > p.view[b]["x"] + 10, "movers that do not interact pass through each "
          "other: %.2f vs %.2f" % (p.view[a]["x"], p.view[b]["x"]))
    check(ev.bodies[wall].category == 2 and ev.bodies[wall].mask == 0, "the wall's BodyState "
          "must carry category 2 and the default mask: %s" % ev.bodies[wall])
    check(ev.bodies[ghost].mask == 1 and ev.bodies[ghost].category == 0, "the ghost's BodyState")
    check(ev.bodies[solid].category == 0 and ev.bodies[solid].mask == 0 and
          not ev.bodies[solid].sensor, "a default body's BodyState leaves the filter out")
    check(not any(e.a == ghost or e.b == ghost for e in ev.contacts),
          "no contact between bodies that do not interact")
    d.stop_and_check()


@test
def contacts_reach_owners_and_all_events_admins():
    d, admin = daemon()
    wall = admin.spawn_ok(ct.box(1, 20), 10, 0, kind=ct.pb.BODY_KIND_STATIC)
    watcher = d.client()
    hello_all_events(watcher, ADMIN)
    quiet = d.client()
    hello_all_events(quiet, ADMIN, all_events=False)
    bystander = d.client()
    bystander.hello(name="bystander")
    bystander.spawn_ok(ct.box(1, 1), 0, 40)  # its view holds the scene
    p = d.client()
    p.hello(name="owner")
    q = d.client()
    q.hello(name="other-owner")
    body = p.spawn_ok(ct.box(1, 1), 5, 0)
    p.move(body, 20, 0)
    got = {c: Events() for c in (p, q, watcher, quiet, bystander)}
    for c, ev in got.items():
        ev.pump(c, 1.0)
    begins = [e for e in got[p].contacts if e.begin and e.b == wall]
    check(len(begins) == 1 and begins[0].a == body, "the owner must get one begin with its body "
          "as a and the wall as b: %s" % got[p].contacts)
    check(abs(begins[0].normal.x - 1) < 1e-6 and abs(begins[0].approach_speed - 20) < 1e-3,
          "normal from the body to the wall (+x) and approach speed 20: %s" % begins[0])
    check(any(e.begin and e.a == body and e.b == wall for e in got[watcher].contacts),
          "an admin with all_events must get the contact")
    check(not got[quiet].contacts, "an admin without all_events gets no contacts")
    check(not got[bystander].contacts, "a player not involved gets no contacts, whatever its view")
    check(not got[q].contacts, "another player gets nothing of a contact it has no body in")
    # a mover-mover contact: another player's body rises into it from below; both owners get it
    other = q.spawn_ok(ct.box(1, 1), 7.9, -6)
    q.move(other, 0, 20)
    for c in (p, q):
        got[c] = Events()
        got[c].pump(c, 1.0)
    for c in (p, q):
        check(any(e.begin and {e.a, e.b} == {body, other} for e in got[c].contacts),
              "both owners get a mover-mover contact: %s" % got[c].contacts)
    # leaving ends it
    p.move(body, -30, 0)
    got[p] = Events()
    got[p].pump(p, 1.0)
    check(any(not e.begin and e.a == body and e.b == wall for e in got[p].contacts),
          "moving away must end the wall contact: %s" % got[p].contacts)
    d.stop_and_check()


@test
def sensor_plate_reports_and_never_blocks():
    d, admin = daemon()
    plate = spawn_filtered(admin, ct.box(1, 5), 10, 0, kind=ct.pb.BODY_KIND_STATIC, sensor=True)
    p = d.client()
    p.hello()
    body = p.spawn_ok(ct.circle(1), 0, 0)
    p.move(body, 30, 0)
    ev = Events()
    ev.pump(p, 1.5)
    p.sync()
    check(p.view[body]["x"] > 20, "a sensor never blocks: x %.3f" % p.view[body]["x"])
    seq = [(e.sensor, e.visitor, e.begin) for e in ev.sensor]
    check(seq == [(plate, body, True), (plate, body, False)],
          "the plate must report a begin, then an end: %s" % seq)
    check(ev.bodies[plate].sensor, "the plate's BodyState says sensor")
    d.stop_and_check()


@test
def turning_in_place_begins_and_ends_contacts():
    """A bar that only turns (no translation) into a wall begins a contact with it, though its
    position never changes (PROTOCOL.md "Contact and sensor events": begin when two interacting
    bodies come within the skin); turning back off the wall ends it, its position still the
    same; turning onto the wall again begins a new one."""
    d, admin = daemon()
    wall = admin.spawn_ok(ct.box(1, 20), 10, 0, kind=ct.pb.BODY_KIND_STATIC)  # x in [9, 11]
    p = d.client()
    p.hello(name="turner")
    # upright, 4 long: level, its tip would reach x = 9.5, past the wall's face
    bar = p.spawn_ok(ct.box(2, 0.2), 7.5, 0, angle=math.pi / 2)
    p.move(bar, 0, 0, w=-3.0)
    ev = Events()
    ev.pump(p, 1.5)
    begins = [e for e in ev.contacts if e.begin and e.a == bar and e.b == wall]
    check(len(begins) == 1, "a bar turning in place into a wall must begin one contact with it: "
          "%s" % ev.contacts)
    p.sync()
    check(abs(p.view[bar]["x"] - 7.5) < 1e-4 and abs(p.view[bar]["y"]) < 1e-4,
          "the bar only turned: at (%.5f, %.5f)" % (p.view[bar]["x"], p.view[bar]["y"]))
    # back towards upright (about 0.75 rad, well short of the other end reaching the wall)
    p.move(bar, 0, 0, w=3.0)
    ev = Events()
    ev.pump(p, 0.25)
    p.move(bar, 0, 0, w=0.0)
    ev.pump(p, 0.25)
    ends = [e for e in ev.contacts if not e.begin and e.a == bar and e.b == wall]
    check(len(ends) == 1 and not any(e.begin for e in ev.contacts),
          "turning back off the wall must end the contact once: %s" % ev.contacts)
    p.sync()
    check(abs(p.view[bar]["x"] - 7.5) < 1e-4 and abs(p.view[bar]["y"]) < 1e-4,
          "the bar only turned: at (%.5f, %.5f)" % (p.view[bar]["x"], p.view[bar]["y"]))
    p.move(bar, 0, 0, w=-3.0)
    ev = Events()
    ev.pump(p, 1.5)
    begins = [e for e in ev.contacts if e.begin and e.a == bar and e.b == wall]
    check(len(begins) == 1, "turning onto the wall again must begin one contact: %s" % ev.contacts)
    d.stop_and_check()


@test
def max_pending_events_flag():
    """The flag and its variable parse, and 0 is refused (a client could never get an event)."""
    d = ct.Daemon(["--max-pending-events", "5"], world=ct.write_world())
    c = d.client()
    c.hello()
    d.stop_and_check()
    r = subprocess.run([ct.OPTS.collided, "--max-pending-events", "0"], capture_output=True,
                       timeout=ct.EXIT_TIMEOUT)
    check(r.returncode != 0, "--max-pending-events 0 must be refused")
    r = subprocess.run([ct.OPTS.collided, "--help"], capture_output=True, timeout=ct.EXIT_TIMEOUT)
    check(b"--max-pending-events" in r.stdout + r.stderr, "--help must list --max-pending-events")


if __name__ == "__main__":
    ct.main()
