// Headless Chromium for the viewer's test, driven through Debian's chromedriver with the W3C
// WebDriver protocol (plain HTTP + JSON: no npm browser driver, whose own browser builds cannot
// be downloaded here), a static file server for the viewer, and a PNG decoder for screenshots.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { inflateSync } from "node:zlib";
import { freePort, sleep } from "./daemon";

export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
export const CHROMEDRIVER = process.env.CHROMEDRIVER ?? "/usr/bin/chromedriver";

export class Browser {
  private constructor(
    private readonly driver: ChildProcess,
    private readonly base: string,
    private readonly session: string,
  ) {}

  static async start(width = 800, height = 600): Promise<Browser> {
    if (!existsSync(CHROMEDRIVER) || !existsSync(CHROMIUM)) {
      throw new Error(`${CHROMEDRIVER} or ${CHROMIUM} missing: run scripts/deps (Debian chromium, chromium-driver)`);
    }
    const port = await freePort();
    const driver = spawn(CHROMEDRIVER, [`--port=${port}`], { stdio: "ignore" });
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 20000;
    for (;;) {
      try {
        const r = await fetch(`${base}/status`);
        if (((await r.json()) as { value: { ready: boolean } }).value.ready) break;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline) {
        driver.kill();
        throw new Error("chromedriver did not come up within 20 s");
      }
      await sleep(50);
    }
    const args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  `--window-size=${width},${height}`, "--force-device-scale-factor=1", "--hide-scrollbars"];
    const res = await post(`${base}/session`, {
      capabilities: { alwaysMatch: { browserName: "chrome", "goog:chromeOptions": { binary: CHROMIUM, args },
                                     "goog:loggingPrefs": { browser: "ALL" } } },
    });
    return new Browser(driver, base, (res as { sessionId: string }).sessionId);
  }

  async goto(url: string): Promise<void> {
    await post(`${this.base}/session/${this.session}/url`, { url });
  }

  /** Runs `script` (a function body; `arguments` holds args) in the page and returns its value. */
  async exec<T>(script: string, ...args: unknown[]): Promise<T> {
    return (await post(`${this.base}/session/${this.session}/execute/sync`, { script, args })) as T;
  }

  /** Holds a key down for ms milliseconds, then releases it: real key events through WebDriver's
   * actions (key: a character, or one of KEYS). */
  async holdKey(key: string, ms: number): Promise<void> {
    await post(`${this.base}/session/${this.session}/actions`, {
      actions: [{ type: "key", id: "keyboard", actions: [
        { type: "keyDown", value: key }, { type: "pause", duration: Math.round(ms) }, { type: "keyUp", value: key }] }],
    });
  }

  /** The first element matching a CSS selector (WebDriver's element reference). */
  private async element(selector: string): Promise<string> {
    const ref = (await post(`${this.base}/session/${this.session}/element`, { using: "css selector", value: selector })) as
      Record<string, string>;
    return Object.values(ref)[0];
  }

  /** A real click on the element's centre (WebDriver's Element Click). */
  async click(selector: string): Promise<void> {
    await post(`${this.base}/session/${this.session}/element/${await this.element(selector)}/click`, {});
  }

  /** Picks a file in an <input type=file> as a person would (WebDriver's Element Send Keys with
   * the file's path: the page gets a change event and a File to read). */
  async setInputFiles(selector: string, path: string): Promise<void> {
    await post(`${this.base}/session/${this.session}/element/${await this.element(selector)}/value`, { text: path });
  }

  /** The browser's console and page errors since the last call (Chromium's log, level SEVERE:
   * console.error, uncaught exceptions, failed loads). */
  async consoleErrors(): Promise<string[]> {
    const entries = (await post(`${this.base}/session/${this.session}/se/log`, { type: "browser" })) as
      { level: string; message: string }[];
    return entries.filter((e) => e.level === "SEVERE").map((e) => e.message);
  }

  async screenshot(): Promise<Buffer> {
    const r = await fetch(`${this.base}/session/${this.session}/screenshot`);
    const j = (await r.json()) as { value: string };
    return Buffer.from(j.value, "base64");
  }

  async close(): Promise<void> {
    try {
      await fetch(`${this.base}/session/${this.session}`, { method: "DELETE" });
    } finally {
      this.driver.kill();
    }
  }
}

async function post(url: string, body: unknown): Promise<unknown> {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const j = (await r.json()) as { value: unknown; sessionId?: string };
  const v = j.value as { error?: string; message?: string; sessionId?: string } | null;
  if (!r.ok || (v && typeof v === "object" && v.error)) throw new Error(`WebDriver ${url}: ${v?.error} ${v?.message}`);
  return v && typeof v === "object" && v.sessionId ? v : j.value;
}

/** WebDriver's key values for the arrows (the W3C spec's table). */
export const KEYS = { left: "\uE012", up: "\uE013", right: "\uE014", down: "\uE015" } as const;

export interface Image {
  width: number;
  height: number;
  /** RGBA, 4 bytes a pixel, rows top to bottom. */
  rgba: Uint8Array;
}

/** Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium's screenshots are). */
export function decodePng(png: Buffer): Image {
  if (png.readUInt32BE(0) !== 0x89504e47) throw new Error("not a PNG");
  let pos = 8;
  let width = 0, height = 0, colourType = 0;
  const idat: Buffer[] = [];
  while (pos < png.length) {
    const len = png.readUInt32BE(pos);
    const type = png.toString("latin1", pos + 4, pos + 8);
    const data = png.subarray(pos + 8, pos + 8 + len);
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      if (data[8] !== 8 || data[12] !== 0) throw new Error("only 8-bit non-interlaced PNGs");
      colourType = data[9];
    } else if (type === "IDAT") idat.push(data);
    pos += 12 + len;
  }
  const bpp = colourType === 6 ? 4 : colourType === 2 ? 3 : 0;
  if (!bpp) throw new Error(`PNG colour type ${colourType} not handled`);
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * bpp;
  const out = new Uint8Array(width * height * 4);
  let prev = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const cur = new Uint8Array(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? cur[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
      let p = 0;
      if (filter === 1) p = a;
      else if (filter === 2) p = b;
      else if (filter === 3) p = (a + b) >> 1;
      else if (filter === 4) {
        const pa = Math.abs(b - c), pb = Math.abs(a - c), pc = Math.abs(a + b - 2 * c);
        p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      cur[i] = (line[i] + p) & 0xff;
    }
    for (let x = 0; x < width; x++) {
      out.set(cur.subarray(x * bpp, x * bpp + 3), (y * width + x) * 4);
      out[(y * width + x) * 4 + 3] = bpp === 4 ? cur[x * bpp + 3] : 255;
    }
    prev = cur;
  }
  return { width, height, rgba: out };
}

export function pixel(img: Image, x: number, y: number): [number, number, number] {
  const i = (Math.round(y) * img.width + Math.round(x)) * 4;
  return [img.rgba[i], img.rgba[i + 1], img.rgba[i + 2]];
}

/** hsl(h, s%, l%) as CSS computes it, in 0..255 RGB. */
export function hslToRgb(h: number, s: number, l: number): [number, number, number] {
  s /= 100;
  l /= 100;
  const k = (n: number) => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
  return [Math.round(f(0) * 255), Math.round(f(8) * 255), Math.round(f(4) * 255)];
}
