#!/usr/bin/env python3
"""`collide-client load --check` verifies the contact and sensor events it receives against its
own geometry (issue 15, client/check.h): players bouncing in a small box among solid statics and
sensor plates begin and end contacts and cross the plates; the run must receive both kinds of
events, measure them, and find no violation. A daemon with a planted event bug (an end threshold
below the skin, say) makes this run fail: the report names the kind (contact_end_near)."""

import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collide_test as ct  # noqa: E402
from collide_test import check, describe, kind_of, test  # noqa: E402

ADMIN = "adm1n"
KINDS = ("contact_begin_far", "contact_end_near", "contact_duplicate_begin",
         "contact_end_without_begin", "contact_not_ended", "sensor_begin_apart",
         "sensor_end_overlapping", "sensor_duplicate_begin", "sensor_end_without_begin",
         "sensor_not_ended")


def spawn_sensor_plate(admin, x, y):
    rid = admin.rid()
    m = ct.msg_spawn(rid, ct.box(1, 1), x, y, ct.pb.BODY_KIND_STATIC)
    m.spawn.sensor = True
    admin.send(m)
    sm = admin.reply(rid)
    check(kind_of(sm) == "spawned", "the plate must spawn, got %s" % describe(sm))


@test
def load_check_verifies_events():
    # solid pillars in the box the players bounce in (mover-static contacts), and the players
    # meet each other (mover-mover contacts)
    pillars = [(x, y, {"box": {"half_extents": [0.5, 0.5]}}) for x in (-4, 0, 4) for y in (-4, 4)]
    d = ct.Daemon(["--admin-token", ADMIN], world=ct.write_world(statics=pillars))
    admin = d.client()
    admin.hello(token=ADMIN)
    for x, y in ((-2, 0), (2, 0), (0, -2), (0, 2)):
        spawn_sensor_plate(admin, x, y)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "report.json")
        r = subprocess.run([ct.OPTS.client, "load", "--port", str(d.game_port), "--clients", "30",
                            "--ramp", "0.3s", "--duration", "4s", "--pattern", "bounce",
                            "--spawn-box", "-6,-6,6,6", "--check", "--check-clients", "30",
                            "--drain", "20s", "--stall-timeout", "60s", "--json", path],
                           capture_output=True, text=True, timeout=180)
        sys.stdout.write(r.stdout + r.stderr)
        j = json.load(open(path)) if os.path.exists(path) else None
    check(j is not None, "the JSON report was written")
    ev = j["check"]["events"]
    check(ev["contact"] >= 20, "contacts were received: %d" % ev["contact"])
    check(ev["sensor"] >= 4, "sensor events were received: %d" % ev["sensor"])
    # only snapshots one tick after the previous are measured: a loaded machine (ASan, ctest -j2)
    # skips some, so the bound is loose
    check(ev["measured"] >= 10,
          "events were measured: %d of %d" % (ev["measured"], ev["contact"] + ev["sensor"]))
    bad = {k: ev[k] for k in KINDS if ev[k]}
    check(not bad, "no event violation: %s" % bad)
    check(r.returncode == 0 and j["pass"], "the checked run passes (exit %d)" % r.returncode)
    check("check events:" in r.stdout and "contact_end_near=0" in r.stdout,
          "the text report has the events line")
    d.stop_and_check()


if __name__ == "__main__":
    ct.main()
