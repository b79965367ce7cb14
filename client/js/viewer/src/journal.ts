// The viewer's journal mode (PROTOCOL.md "Recordings"): a match recording the daemon wrote
// (--record-dir), opened from a file ("Open recording…") or a URL (?journal=URL: the daemon's
// ops port serves /recordings/<name>), replayed in the browser by the server's own world compiled
// to WebAssembly (the SDK's JournalPlayer over dist/collide_world.wasm, which the daemon serves
// beside the page). A tick slider over [start, last], play / pause, a step either way, a speed;
// a cut journal's note and a replay's failure (a stored state hash not reached) shown on the bar.
import { BodyKind, JournalError, JournalPlayer, WorldModule, type Body, type JournalBody, type JournalInfo } from "../../src/index";

/** What the page shows of the journal, for tests and tools (window.collideViewer.journal). */
export interface JournalState {
  /** A journal is open. */
  loaded: boolean;
  /** Its name (the file's, or the URL's last part). */
  name: string;
  tick: number;
  startTick: number;
  lastTick: number;
  playing: boolean;
  /** Ticks per world tick of play (1, 4, 16). */
  speed: number;
  /** How the journal ends short, "" for a clean end. */
  truncated: string;
  /** A replay's failure ("tick 300: state hash ..."), or why the journal did not open; "". */
  error: string;
  /** The tick the failure names, 0 for none. */
  errorTick: number;
  /** The bodies drawn, as the replay has them at `tick` (every live body, ascending ids). */
  bodies: JournalBody[];
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

export class JournalView {
  readonly state: JournalState = {
    loaded: false, name: "", tick: 0, startTick: 0, lastTick: 0, playing: false, speed: 1,
    truncated: "", error: "", errorTick: 0, bodies: [],
  };
  private player: JournalPlayer | null = null;
  private module: Promise<WorldModule> | null = null;
  private drawn: Body[] = [];
  private carry = 0; // ticks of play not yet taken (fractions of a tick between frames)
  private lastFrame = 0;
  private readonly bar = $("journal");
  private readonly slider = $<HTMLInputElement>("j-slider");
  private readonly playButton = $<HTMLButtonElement>("j-play");
  private readonly note = $("j-note");
  private readonly tickLabel = $("j-tick");
  private readonly speedSelect = $<HTMLSelectElement>("j-speed");

  /** moduleUrl: the world's WebAssembly module (the daemon serves it beside the page); onOpen:
   * called when a journal opens (the live session closes, the camera fits its world). */
  constructor(private readonly moduleUrl: string, private readonly onOpen: (info: JournalInfo) => void) {
    this.slider.addEventListener("input", () => {
      this.pause();
      this.seek(this.slider.valueAsNumber);
    });
    this.playButton.addEventListener("click", () => (this.state.playing ? this.pause() : this.play()));
    $("j-step").addEventListener("click", () => { this.pause(); this.seek(this.state.tick + 1); });
    $("j-back").addEventListener("click", () => { this.pause(); this.seek(this.state.tick - 1); });
    this.speedSelect.addEventListener("change", () => (this.state.speed = Number(this.speedSelect.value) || 1));
    $<HTMLInputElement>("journal-file").addEventListener("change", (e) => {
      const file = (e.target as HTMLInputElement).files?.[0];
      if (file) void file.arrayBuffer().then((b) => this.open(new Uint8Array(b), file.name), (err) => this.fail(`${file.name}: ${String(err)}`));
    });
  }

  get active(): boolean {
    return this.player !== null;
  }

  get info(): JournalInfo | null {
    return this.player?.info ?? null;
  }

  /** The bodies at the current tick, as the drawing code takes them. */
  bodies(): Body[] {
    return this.drawn;
  }

  /** Fetches a journal (CORS applies: the daemon's ops port allows any origin) and opens it. */
  async openUrl(url: string): Promise<boolean> {
    const name = decodeURIComponent(url.replace(/[?#].*$/, "").split("/").pop() || url);
    this.showBar(name);
    this.note.textContent = `loading ${name}...`;
    let bytes: Uint8Array;
    try {
      const r = await fetch(url);
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
      bytes = new Uint8Array(await r.arrayBuffer());
    } catch (e) {
      this.fail(`could not fetch ${url}: ${(e as Error).message ?? String(e)}`);
      return false;
    }
    return this.open(bytes, name);
  }

  /** Opens a journal's bytes; false (the reason on the bar) when it is not one this build reads. */
  async open(bytes: Uint8Array, name: string): Promise<boolean> {
    this.close();
    this.showBar(name);
    let module: WorldModule;
    try {
      module = await (this.module ??= this.loadModule());
    } catch (e) {
      this.module = null;
      this.fail(`the world's module did not load from ${this.moduleUrl}: ${(e as Error).message ?? String(e)}`);
      return false;
    }
    try {
      this.player = JournalPlayer.open(module, bytes);
    } catch (e) {
      this.fail(`${name}: ${(e as Error).message ?? String(e)}`);
      return false;
    }
    const p = this.player;
    Object.assign(this.state, {
      loaded: true, name, startTick: p.startTick, lastTick: p.lastTick, playing: false,
      truncated: p.truncated ?? "", error: "", errorTick: 0,
    });
    this.slider.min = String(p.startTick);
    this.slider.max = String(p.lastTick);
    this.slider.disabled = false;
    this.onOpen(p.info);
    this.seek(p.startTick);
    return true;
  }

  /** Leaves journal mode (the live viewer connects again). */
  close(): void {
    this.player?.dispose();
    this.player = null;
    this.drawn = [];
    Object.assign(this.state, { loaded: false, playing: false, bodies: [], error: "", errorTick: 0, truncated: "" });
    this.bar.hidden = true;
  }

  play(): void {
    if (!this.player) return;
    if (this.state.tick >= this.state.lastTick) this.seek(this.state.startTick); // from the start again
    this.state.playing = true;
    this.carry = 0;
    this.lastFrame = performance.now();
    this.playButton.textContent = "pause";
  }

  pause(): void {
    this.state.playing = false;
    this.playButton.textContent = "play";
  }

  /** Each frame: play on by the time elapsed, at the journal's tick rate times the speed. */
  frame(now: number): void {
    if (!this.player || !this.state.playing) return;
    const dt = Math.min(0.25, Math.max(0, (now - this.lastFrame) / 1000)); // a hidden tab's pause is not played through
    this.lastFrame = now;
    this.carry += dt * this.player.info.tickRateHz * this.state.speed;
    const n = Math.floor(this.carry);
    if (n < 1) return;
    this.carry -= n;
    this.seek(this.state.tick + n);
    if (this.state.tick >= this.state.lastTick || this.state.error) this.pause();
  }

  /** The world to `tick` (clamped); a replay's failure shown on the bar, the world where it
   * stopped. */
  seek(tick: number): void {
    const p = this.player;
    if (!p) return;
    try {
      p.seek(tick);
      this.state.error = "";
      this.state.errorTick = 0;
    } catch (e) {
      if (!(e instanceof JournalError)) throw e;
      this.state.error = e.message;
      this.state.errorTick = e.tick ?? 0;
      this.pause();
      console.warn(`viewer: the replay failed: ${e.message}`);
    }
    this.state.tick = p.tick;
    this.state.bodies = p.bodies();
    this.drawn = this.state.bodies.map((b) => asBody(b, this.state.tick));
    this.slider.valueAsNumber = this.state.tick;
    this.tickLabel.textContent = `tick ${this.state.tick} / ${this.state.lastTick}`;
    this.showNote();
  }

  private showBar(name: string): void {
    this.bar.hidden = false;
    this.state.name = name;
    $("j-name").textContent = name;
    this.slider.disabled = true;
  }

  private showNote(): void {
    const parts: string[] = [];
    if (this.state.error) parts.push(`replay failed: ${this.state.error}`);
    if (this.state.truncated) parts.push(`${this.state.truncated}: it plays to tick ${this.state.lastTick}`);
    this.note.textContent = parts.join(" | ");
    this.note.className = this.state.error ? "error" : this.state.truncated ? "warn" : "";
  }

  private fail(why: string): void {
    this.close();
    this.bar.hidden = false;
    this.state.error = why;
    this.note.textContent = why;
    this.note.className = "error";
    console.warn(`viewer: ${why}`);
  }

  private async loadModule(): Promise<WorldModule> {
    const r = await fetch(this.moduleUrl);
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    return WorldModule.instantiate(await r.arrayBuffer());
  }
}

/** A replayed body as the live viewer's drawing takes it. */
function asBody(b: JournalBody, tick: number): Body {
  return {
    id: b.id, position: b.position, velocity: b.velocity, angle: b.angle, angularVelocity: b.angularVelocity,
    lastInputSeq: b.lastInputSeq, shape: b.shape, kind: b.kind === BodyKind.BODY_KIND_STATIC ? BodyKind.BODY_KIND_STATIC : BodyKind.BODY_KIND_MOVING,
    owner: b.owner, category: 0, mask: 0, sensor: b.sensor, grounded: b.grounded, groundId: b.groundId,
    oneWay: b.oneWay, tick,
  };
}
