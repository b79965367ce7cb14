#!/usr/bin/env bash
# Runs one load (PERFORMANCE.md L1/L2) against a fresh collided and prints the client's report plus
# the daemon's side: CPU (from /proc), tick duration quantiles (from /metrics, bucket bounds),
# skipped ticks and slow-client drops.
#
#   bench/client/bench_load.sh BUILD_DIR CLIENTS DURATION RAMP [collide-client load options...]
#   DAEMON_ARGS="--view-radius 40" bench/client/bench_load.sh build/client-rel 1000 60 5
#   SERVER=bench bench/client/bench_load.sh build/client-rel 5000 30 10   # the do-little stand-in server
#   TRANSPORT=ws bench/client/bench_load.sh build/release 1000 60 5     # L1 over the WebSocket port
set -euo pipefail
B=$1 N=$2 D=$3 R=$4
shift 4
out=$(mktemp -d)
hp=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
wp=0
if [[ ${TRANSPORT:-tcp} == ws ]]; then
  wp=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
if [[ ${SERVER:-collided} == bench ]]; then
  "$B/bench/client/collide-client-bench-server" >"$out/server.log" 2>&1 &
  sp=$!
  for _ in $(seq 100); do grep -q '^port=' "$out/server.log" 2>/dev/null && break; sleep 0.05; done
  gp=$(sed -n 's/^port=//p' "$out/server.log")
else
  # shellcheck disable=SC2086
  "$B/server/net/collided" --port 0 --udp-port 0 --ws-port "$wp" --http-port "$hp" --bind 127.0.0.1 ${DAEMON_ARGS:-} \
    2>"$out/server.log" &
  sp=$!
  for _ in $(seq 100); do grep -q 'event=listening' "$out/server.log" 2>/dev/null && break; sleep 0.05; done
  gp=$(grep -o 'game_port=[0-9]*' "$out/server.log" | head -1 | cut -d= -f2)
  if [[ $wp != 0 ]]; then gp=$wp; set -- --transport ws "$@"; fi
  curl -s "localhost:$hp/metrics" >"$out/m0"
fi
hz=$(getconf CLK_TCK)
t0=$(awk '{print $14 + $15}' "/proc/$sp/stat")
rc=0
"$B/client/collide-client" load --port "$gp" --clients "$N" --duration "$D" --ramp "$R" \
  --json "$out/report.json" "$@" || rc=$?
t1=$(awk '{print $14 + $15}' "/proc/$sp/stat")
echo "client exit status: $rc"
echo "server cpu: $(python3 -c "print(f'{($t1 - $t0) / $hz:.2f} s over the run')")"
if [[ ${SERVER:-collided} != bench ]]; then
  curl -s "localhost:$hp/metrics" >"$out/m1"
  python3 - "$out/m0" "$out/m1" <<'PY'
import re, sys
def load(path):
    b, other = {}, {}
    for line in open(path):
        m = re.match(r'collide_tick_duration_seconds_bucket\{le="([^"]+)"\} (\d+)', line)
        if m: b[m.group(1)] = int(m.group(2))
        m = re.match(r'(collide_ticks_skipped_total|collide_slow_client_drops_total|collide_slow_client_disconnects_total|collide_quantized_records_(?:copied|encoded)_total) (\d+)', line)
        if m: other[m.group(1)] = int(m.group(2))
        m = re.match(r'(collide_transport_(?:bytes|frames)_(?:in|out)_total\{transport="[a-z]+"\}) (\d+)', line)
        if m: other[m.group(1)] = int(m.group(2))
    return b, other
(b0, o0), (b1, o1) = load(sys.argv[1]), load(sys.argv[2])
d = [(le, b1[le] - b0.get(le, 0)) for le in b1]
total = d[-1][1] if d else 0
for q in (0.5, 0.99):
    le = next((le for le, c in d if total and c >= q * total), "?")
    print(f"daemon tick p{int(q * 100)} <= {le} s (histogram bucket bound; {total} ticks)")
for k in o1: print(f"daemon {k}: {o1[k] - o0.get(k, 0)}")
# Quantized clients: every byte sent (frames, envelopes, acks, pongs included) over the body records
# the snapshots carried, an upper bound on the bytes per body per snapshot.
recs = sum(o1[k] - o0.get(k, 0) for k in o1 if k.startswith("collide_quantized_records_"))
out = sum(o1[k] - o0.get(k, 0) for k in o1 if k.startswith("collide_transport_bytes_out_total"))
if recs: print(f"daemon bytes out per quantized body record (all bytes / records): {out / recs:.2f}")
PY
fi
kill "$sp" 2>/dev/null || true
wait "$sp" 2>/dev/null || true
echo "json: $out/report.json"
