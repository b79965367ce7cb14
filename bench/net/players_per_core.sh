#!/usr/bin/env bash
# Players per daemon core (issue 32; PERFORMANCE.md "Protocol 1.2 figures"): the daemon pinned to
# CPU 0 with one room thread, collide-client pinned to CPU 1; 10 rooms, 20 Hz quantized
# snapshots, intents at 10 Hz. For each N a fresh daemon; printed per N: the daemon's CPU share
# (load --daemon-pid), skipped and late steps over the run (/metrics), intent-to-ack p99, errors.
# "On schedule" is 0 skipped steps and late steps <= 0.1%, with ack p99 <= 2 snapshot intervals.
#
#   bench/net/players_per_core.sh BUILD_DIR [N ...]          # e.g. build/release 2000 3000 5000
#   TRANSPORT=udp DURATION=20 bench/net/players_per_core.sh build/release 2000
#   COLLIDED=/tmp/old/build/server/net/collided bench/net/players_per_core.sh build/release  # another daemon
#   MAX_CLIENTS=4000 TRANSPORT=udp DURATION=12 bench/net/players_per_core.sh build/release 500
#     (--max-clients other than N + 100: the UDP host's peer slots follow it, fit_window's figure)
#
# Needs an otherwise idle 2-core machine: anything else on CPU 0 is charged to the daemon.
set -euo pipefail
B=${1:?usage: bench/net/players_per_core.sh BUILD_DIR [N ...]}
shift
counts=("$@")
[[ $# -eq 0 ]] && counts=(2000 3000 5000)
DURATION=${DURATION:-20} TRANSPORT=${TRANSPORT:-tcp}
free_port() { python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET, getattr(socket, sys.argv[1])); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' "$1"; }
metric() { curl -s "http://127.0.0.1:$http/metrics" | awk -v m="$1" '$1 == m {s += $2} END {print s + 0}'; }

printf '| players | transport | daemon CPU (cores) | skipped / late steps (of steps) | intent-to-ack p50 / p99 | errors / disconnects |\n|---|---|---|---|---|---|\n'
for n in "${counts[@]}"; do
  tmp=$(mktemp -d /tmp/ppc.XXXXXX)
  http=$(free_port SOCK_STREAM) game=$(free_port SOCK_STREAM) udp=$(free_port SOCK_DGRAM)
  ulimit -n $((n * 2 + 1024)) 2>/dev/null || true
  taskset -c 0 "${COLLIDED:-$B/server/net/collided}" --bind 127.0.0.1 --port "$game" --udp-port "$udp" \
    --http-port "$http" --ws-port 0 --threads 1 --max-clients "${MAX_CLIENTS:-$((n + 100))}" \
    --max-pending $((n + 100)) --max-pending-per-address $((n + 100)) --log-level warn \
    2>"$tmp/daemon.log" &
  pid=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$http/healthz" >/dev/null && break; sleep 0.1; done
  port=$game
  [[ $TRANSPORT == udp ]] && port=$udp
  s0=$(metric collide_ticks_skipped_total) l0=$(metric collide_steps_late_total) t0=$(metric collide_ticks_total)
  "$B/client/collide-client" load --transport "$TRANSPORT" --port "$port" --pin 1 --daemon-pid "$pid" \
    --rooms 10 --clients "$n" --rate 10 --quantized --snapshot-rate 20 --duration "${DURATION}s" \
    --ramp 5s --drain 10s --stall-timeout 60s --json "$tmp/load.json" >"$tmp/load.txt" 2>&1 || true
  s=$(($(metric collide_ticks_skipped_total) - s0)) l=$(($(metric collide_steps_late_total) - l0))
  t=$(($(metric collide_ticks_total) - t0))
  kill "$pid"; wait "$pid" 2>/dev/null || true
  python3 - "$tmp/load.json" "$n" "$TRANSPORT" "$s" "$l" "$t" <<'PY'
import json, sys
n, tr, s, l, t = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
try:
    j = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("| %s | %s | no report |" % (n, tr)); sys.exit(0)
a = j["latency"]["intent_to_ack"]
cpu = j.get("daemon", {}).get("cpu_share", float("nan"))
print("| %s | %s | %.2f | %d / %d (%.2f%% of %d) | %.1f / %.1f ms | %d / %d |" % (
    n, tr, cpu, s, l, 100.0 * l / max(1, t), t, a["p50_ms"], a["p99_ms"],
    j["errors"]["total"], j["disconnects"]))
PY
  [[ -n ${KEEP:-} ]] && echo "reports: $tmp" >&2 || rm -rf "$tmp"
done
