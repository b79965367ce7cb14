#!/usr/bin/env bash
# A burst of Hellos with tickets (issue 31 "Performance": 1,000 Hellos with tickets, no skipped
# tick). One daemon with a ticket key and --ticket-required on; one collide-client load whose
# N players all connect at once (--ramp 0), each with its own ticket for one of 10 rooms; the
# daemon's tick counters (/metrics) read before and after.
#
#   bench/net/ticket_burst.sh BUILD_DIR [N=1000]     # e.g. build/release
#
# Every Hello comes from 127.0.0.1 here, so the per-address pending cap is raised to N (a real
# burst comes from many addresses). Timing figures need an otherwise idle machine.
set -euo pipefail
B=${1:?usage: bench/net/ticket_burst.sh BUILD_DIR [N]}
N=${2:-1000}
tmp=$(mktemp -d /tmp/ticket-burst.XXXXXX)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; [[ -n ${KEEP:-} ]] || rm -rf "$tmp"' EXIT
head -c 48 /dev/urandom | base64 | tr -d '\n/+=' >"$tmp/key"
echo >>"$tmp/key"

http=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$B/server/net/collided" --bind 127.0.0.1 --port 0 --http-port "$http" --ws-port 0 --udp-port 0 \
  --ticket-key-file "$tmp/key" --ticket-required on --max-clients $((N + 100)) \
  --max-pending $((N + 100)) --max-pending-per-address $((N + 100)) \
  2>"$tmp/daemon.log" &
pid=$!
for _ in $(seq 100); do
  grep -q "event=listening" "$tmp/daemon.log" 2>/dev/null && break
  sleep 0.1
done
game=$(grep -o 'game_port=[0-9]*' "$tmp/daemon.log" | head -1 | cut -d= -f2)
metric() { curl -s "http://127.0.0.1:$http/metrics" | awk -v m="$1" '$1 == m {s += $2} END {print s + 0}'; }
skipped0=$(metric collide_ticks_skipped_total) late0=$(metric collide_steps_late_total)

"$B/client/collide-client" load --port "$game" --ticket-key-file "$tmp/key" --rooms 10 \
  --clients "$N" --ramp 0 --duration 6s --rate 10 --drain 20s --json "$tmp/load.json" \
  >"$tmp/load.txt" || true

skipped=$(($(metric collide_ticks_skipped_total) - skipped0))
late=$(($(metric collide_steps_late_total) - late0))
python3 - "$tmp/load.json" "$N" "$skipped" "$late" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
n, skipped, late = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
hello = j["latency"]["hello_to_welcome"]
print("players %d (all at once, each with its own ticket): spawned %d, errors %d, disconnects %d"
      % (n, j["clients_spawned"], j["errors"]["total"], j["disconnects"]))
print("daemon: skipped ticks %d, late steps %d during the burst and the run" % (skipped, late))
if hello["count"]:
    print("Hello to Welcome p50 / p99 / max: %.1f / %.1f / %.1f ms"
          % (hello["p50_ms"], hello["p99_ms"], hello["max_ms"]))
sys.exit(0 if skipped == 0 and j["clients_spawned"] == n else 1)
PY
