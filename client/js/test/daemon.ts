// The real collided for the SDK's tests, as tests/integration/collide_test.py runs it: a
// subprocess on ephemeral loopback ports, its stderr read for event=listening (the bound ports),
// SIGTERM at the end, which must drain and exit 0 with no sanitizer report.
// COLLIDED names the binary (ctest passes it).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const COLLIDED = process.env.COLLIDED ?? "";
if (!COLLIDED) throw new Error("set COLLIDED to the collided binary (ctest does)");

// Generous: an ASan daemon on a loaded 2-core machine is slow to start and to drain.
export const START_TIMEOUT_MS = 30000;
export const EXIT_TIMEOUT_MS = 20000;

/** Whether this collided has the WebSocket listener (--ws-port, issue 14). */
export const HAS_WS = spawnSync(COLLIDED, ["--help"], { encoding: "utf8" }).stdout.includes("--ws-port");

export interface DaemonOptions {
  args?: string[];
  /** Also listen for WebSocket on an ephemeral port. */
  ws?: boolean;
  /** Also listen for HTTP (the ops port: /metrics, /healthz, /recordings) on an ephemeral port. */
  http?: boolean;
  world?: WorldSpec;
}

export interface WorldSpec {
  bounds?: [[number, number], [number, number]];
  statics?: {
    position: [number, number];
    box?: { half_extents: [number, number] };
    circle?: { radius: number };
    polygon?: { vertices: [number, number][] };
    one_way?: boolean;
  }[];
  spawn_points?: [number, number][];
  /** 1.2: the level's gravity (units/s^2); absent: none. */
  gravity?: [number, number];
}

export function writeWorld(spec: WorldSpec): string {
  const dir = mkdtempSync(join(tmpdir(), "collide-js-world-"));
  const path = join(dir, "world.json");
  const bounds = spec.bounds ?? [[-1000, -1000], [1000, 1000]];
  const doc = {
    bounds: { min: bounds[0], max: bounds[1] },
    statics: spec.statics ?? [],
    spawn_points: spec.spawn_points ?? [[0, 0]],
    ...(spec.gravity ? { gravity: spec.gravity } : {}),
  };
  writeFileSync(path, JSON.stringify(doc));
  return path;
}

// A test that hangs (a promise never settled) must still end: past this, every daemon this file
// started is killed and the file fails. Unref'd, so it never keeps a finished file alive.
const WATCHDOG_MS = 180000;
const started = new Set<ChildProcess>();
setTimeout(() => {
  console.error(`watchdog: test file still running after ${WATCHDOG_MS} ms`);
  for (const p of started) p.kill("SIGKILL");
  process.exit(1);
}, WATCHDOG_MS).unref();
process.on("exit", () => {
  for (const p of started) if (p.exitCode === null) p.kill("SIGKILL");
});

export class Daemon {
  readonly proc: ChildProcess;
  gamePort = 0;
  wsPort = 0;
  httpPort = 0;
  private log: string[] = [];

  private constructor(args: string[]) {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("COLLIDE_")) env[k] = v;
    this.proc = spawn(COLLIDED, args, { stdio: ["ignore", "ignore", "pipe"], env });
    started.add(this.proc);
    let partial = "";
    this.proc.stderr!.setEncoding("utf8");
    this.proc.stderr!.on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop()!;
      this.log.push(...lines);
    });
  }

  /** Starts collided and waits for it to listen. The WebSocket port is picked free beforehand
   * (collided has no "any port" for it), so another test may take it between the pick and the
   * bind: a start that fails with "address already in use" is tried again on a new port. */
  static async start(opts: DaemonOptions = {}): Promise<Daemon> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await Daemon.startOnce(opts);
      } catch (e) {
        if (attempt >= 3 || !/address already in use/.test(String(e))) throw e;
      }
    }
  }

  private static async startOnce(opts: DaemonOptions): Promise<Daemon> {
    // --udp-port 0: the default 7779 would collide between tests run in parallel. --http-port 0
    // is "off" (no ops port), like --ws-port 0: an ephemeral one is picked when asked for.
    const args = ["--bind", "127.0.0.1", "--port", "0", "--http-port", opts.http ? String(await freePort()) : "0",
      "--udp-port", "0"];
    args.push("--threads", "1");
    if (opts.world) args.push("--world", writeWorld(opts.world));
    // --ws-port 0 is "off" (the default 7778 would collide between tests run in parallel).
    if (HAS_WS) args.push("--ws-port", opts.ws ? String(await freePort()) : "0");
    args.push(...(opts.args ?? []));
    const d = new Daemon(args);
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const line = d.log.find((l) => l.includes("event=listening"));
      if (line) {
        d.gamePort = Number(/\bgame_port=(\d+)/.exec(line)?.[1] ?? 0);
        d.wsPort = Number(/\bws_port=(\d+)/.exec(line)?.[1] ?? 0);
        d.httpPort = Number(/\bhttp_port=(\d+)/.exec(line)?.[1] ?? 0);
        if (opts.ws && !d.wsPort) throw new Error(`no ws_port in the listening line: ${line}`);
        if (opts.http && !d.httpPort) throw new Error(`no http_port in the listening line: ${line}`);
        return d;
      }
      if (d.proc.exitCode !== null) throw new Error(`collided exited ${d.proc.exitCode}\n${d.logTail()}`);
      await sleep(20);
    }
    d.proc.kill("SIGKILL");
    throw new Error(`no event=listening within ${START_TIMEOUT_MS} ms\n${d.logTail()}`);
  }

  get tcpUrl(): string {
    return `tcp://127.0.0.1:${this.gamePort}`;
  }

  get wsUrl(): string {
    return `ws://127.0.0.1:${this.wsPort}/v1`;
  }

  /** The URL of a transport by name. */
  url(transport: "tcp" | "ws"): string {
    return transport === "tcp" ? this.tcpUrl : this.wsUrl;
  }

  /** The ops port's base URL (start with `http: true`). */
  get httpUrl(): string {
    return `http://127.0.0.1:${this.httpPort}`;
  }

  /** Waits for a log line matching re (any seen so far counts) and returns it. */
  async waitForLog(re: RegExp, timeoutMs = START_TIMEOUT_MS): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = this.log.find((l) => re.test(l));
      if (line) return line;
      if (this.proc.exitCode !== null) throw new Error(`collided exited ${this.proc.exitCode} before ${re}\n${this.logTail()}`);
      if (Date.now() > deadline) throw new Error(`no log line ${re} within ${timeoutMs} ms\n${this.logTail()}`);
      await sleep(20);
    }
  }

  logTail(n = 40): string {
    return this.log.slice(-n).join("\n");
  }

  /** SIGTERM; resolves with the exit code. */
  async terminate(): Promise<number | null> {
    if (this.proc.exitCode === null) {
      const exited = new Promise<void>((r) => this.proc.once("exit", () => r()));
      this.proc.kill("SIGTERM");
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), EXIT_TIMEOUT_MS)));
      const t = await Promise.race([exited.then(() => true), late]);
      clearTimeout(timer);
      if (!t) {
        this.proc.kill("SIGKILL");
        await exited;
        return null;
      }
    }
    return this.proc.exitCode;
  }

  /** The end of every test: SIGTERM drains and exits 0, with no sanitizer report. */
  async stopAndCheck(): Promise<void> {
    const rc = await this.terminate();
    if (rc !== 0) throw new Error(`collided must exit 0 on SIGTERM, got ${rc}\n${this.logTail()}`);
    const reports = this.log.filter((l) => /ERROR: (Address|Leak)Sanitizer|runtime error:/.test(l));
    if (reports.length) throw new Error(`sanitizer reports:\n${reports.join("\n")}`);
  }
}

/** A loopback port free a moment ago (the daemon's ws_port 0 means off, not "any"). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls cond every 10 ms until it holds or timeoutMs passes (then throws with what). */
export async function waitFor(cond: () => boolean, what: string, timeoutMs = 10000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** The transports a session test runs over: TCP always, WebSocket once collided has it;
 * COLLIDE_JS_TRANSPORT=tcp|ws keeps one (ctest runs each as its own test). */
export const TRANSPORTS: { name: "tcp" | "ws"; skip: string | false }[] = [
  { name: "tcp" as const, skip: false as const },
  { name: "ws" as const, skip: HAS_WS ? (false as const) : "collided has no --ws-port yet (branch i14-ws)" },
].filter((t) => !process.env.COLLIDE_JS_TRANSPORT || t.name === process.env.COLLIDE_JS_TRANSPORT);
