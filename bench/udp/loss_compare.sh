#!/usr/bin/env bash
# UDP beside TCP under real packet loss (issue 30 "Performance"; PERFORMANCE.md "Protocol 1.2
# figures"), every run inside scripts/loss-rig's private network namespace:
#   1. 2% loss each way on both game ports: CLIENTS players (100) over UDP, then over TCP, each
#      against a fresh daemon (60 Hz ticks, a snapshot every tick): intent-to-ack p99.9 and the
#      longest gap between two snapshots (the load report's snapshot inter-arrival max), also in
#      snapshot intervals (target: UDP <= 70 ms and <= 5 intervals).
#   2. Lossless (the rig at 0 per mille, the same namespace set-up): L1 over UDP (BYTES_CLIENTS
#      players, 1,000), at rest (--speed 0: with --hold, players that send nothing after their
#      first intent; without, players resending it 30 times a second) and moving, with one observer
#      player (bench/udp/udp_observer.py) counting snapshot bytes over the bodies in its view:
#      bytes per body per snapshot (targets <= 0.5 at rest, <= 6 moving). The load report's
#      all-bytes figure (every byte received, over snapshots, over the observer's bodies in view)
#      is printed beside it.
#
#   bench/udp/loss_compare.sh BUILD_DIR [DURATION_S]          # e.g. build/release 30
#   CLIENTS=100 RATE=30 BYTES_CLIENTS=1000 PERMILLE=20 bench/udp/loss_compare.sh build/release 30
#   PARTS=bytes bench/udp/loss_compare.sh build/release 20      # only part 2 (PARTS="loss bytes")
#
# RATE is intents per second per player (default 30, L1's). The JSON reports and daemon logs stay
# in the directory printed at the end. Timing figures need an otherwise idle machine.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
readonly TCP_PORT=7777 UDP_PORT=7779 HTTP_PORT=8080
readonly TICK_HZ=60

# Inside the rig: one daemon, one load run (plus the observer when asked), then the daemon stops.
if [[ ${1:-} == --inner ]]; then
  shift
  B=$1 out=$2 name=$3 observe=$4
  shift 4
  # shellcheck disable=SC2086  # DAEMON_ARGS: extra flags, split on purpose
  "$B/server/net/collided" --bind 127.0.0.1 --port "$TCP_PORT" --udp-port "$UDP_PORT" \
    --ws-port 0 --http-port "$HTTP_PORT" --tick-rate "$TICK_HZ" ${DAEMON_ARGS:-} \
    2>"$out/$name.daemon.log" &
  daemon=$!
  trap 'kill "$daemon" 2>/dev/null || true' EXIT
  for _ in $(seq 200); do
    grep -q 'event=listening' "$out/$name.daemon.log" && break
    sleep 0.05
  done
  grep -q 'event=listening' "$out/$name.daemon.log" || { echo "collided did not start" >&2; exit 1; }
  obs=""
  if [[ $observe != 0 ]]; then
    # Warm-up: the ramp plus a second; measured: the rest of the run but the last second.
    /usr/bin/python3 "$here/udp_observer.py" --port "$UDP_PORT" --pb-dir "$B/tests/pb" \
      --warmup "$observe" --seconds "$((DURATION - observe - 1))" >"$out/$name.observer.json" &
    obs=$!
  fi
  rc=0
  "$B/client/collide-client" load --json "$out/$name.json" --duration "${DURATION}s" "$@" \
    >"$out/$name.txt" 2>&1 || rc=$?
  [[ -z $obs ]] || wait "$obs" || rc=$?
  kill -TERM "$daemon" 2>/dev/null || true
  wait "$daemon" 2>/dev/null || true
  exit "$rc"
fi

B=$(cd "${1:?usage: bench/udp/loss_compare.sh BUILD_DIR [DURATION_S]}" && pwd)
export DURATION=${2:-30}
CLIENTS=${CLIENTS:-100} RATE=${RATE:-30} BYTES_CLIENTS=${BYTES_CLIENTS:-1000}
PERMILLE=${PERMILLE:-20}
out=$(mktemp -d /tmp/loss-compare.XXXXXX)
ramp=$((DURATION / 6 > 1 ? DURATION / 6 : 1))

rig() { # PERMILLE NAME OBSERVE_WARMUP load-args...
  local p=$1 name=$2 observe=$3
  shift 3
  echo "== $name (${p} per mille each way)" >&2
  "$root/scripts/loss-rig" --quiet --permille "$p" --udp "$UDP_PORT" --tcp "$TCP_PORT" -- \
    "$0" --inner "$B" "$out" "$name" "$observe" "$@" ||
    echo "   $name: exit status $? (see $out/$name.txt)" >&2
}

common=(--clients "$CLIENTS" --rate "$RATE" --ramp "${ramp}s" --drain 5s --stall-timeout 30s)
if [[ " ${PARTS:-loss bytes} " == *" loss "* ]]; then
  rig "$PERMILLE" loss_udp 0 --transport udp --port "$UDP_PORT" "${common[@]}"
  rig "$PERMILLE" loss_tcp 0 --transport tcp --port "$TCP_PORT" "${common[@]}"
fi
l1=(--transport udp --port "$UDP_PORT" --clients "$BYTES_CLIENTS" --rate 30 --ramp "${ramp}s")
if [[ " ${PARTS:-loss bytes} " == *" bytes "* ]]; then
  # At rest two ways: players that hold their (zero) intent, sending nothing more, and players
  # that resend it 30 times a second, each resend a new last_input_seq for every viewer.
  rig 0 hold_udp "$((ramp + 1))" "${l1[@]}" --speed 0 --hold
  rig 0 rest_udp "$((ramp + 1))" "${l1[@]}" --speed 0
  rig 0 moving_udp "$((ramp + 1))" "${l1[@]}"
fi

python3 - "$out" "$PERMILLE" "$TICK_HZ" <<'PY'
import json, os, sys
out, permille, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
interval = 1000.0 / hz

def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

print("\n%.1f%% loss each way, %s players:" % (permille / 10, (load("loss_udp.json") or {}).get("clients", "?")))
print("| transport | intent-to-ack p99 / p99.9 / max (ms) | longest gap between snapshots | acked / scheduled | disconnects |")
print("|---|---|---|---|---|")
for t in ("udp", "tcp"):
    j = load("loss_%s.json" % t)
    if j is None:
        print("| %s | no report |" % t)
        continue
    a, g = j["latency"]["intent_to_ack"], j["latency"]["snapshot_interarrival"]
    print("| %s | %.1f / %.1f / %.1f | %.1f ms (%.1f intervals) | %d / %d | %d |" % (
        t, a["p99_ms"], a["p999_ms"], a["max_ms"], g["max_ms"], g["max_ms"] / interval,
        j["intents"]["acked"], j["intents"]["scheduled"], j["disconnects"]))

print("\nLossless, UDP, bytes per body per snapshot:")
print("| bodies | observer: snapshot bytes / bodies in view | bodies in view | all bytes a player received / snapshots / bodies in view |")
print("|---|---|---|---|")
for name, what in (("hold_udp", "at rest, intent held (--speed 0 --hold)"),
                   ("rest_udp", "at rest, zero intent resent 30/s (--speed 0)"),
                   ("moving_udp", "moving")):
    o, j = load(name + ".observer.json"), load(name + ".json")
    if o is None or j is None or not o["bodies_in_view"]:
        print("| %s | no report |" % what)
        continue
    per_snap = j["bytes"]["in_total"] / max(1, j["snapshots"]["total"])
    print("| %s | %.3f | %.1f | %.3f |" % (what, o["bytes_per_body_per_snapshot"],
                                          o["bodies_in_view"], per_snap / o["bodies_in_view"]))
PY
echo "reports: $out" >&2
