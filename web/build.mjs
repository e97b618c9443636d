// Builds the web UI into internal/web/dist (embedded in the corral binary):
//   index.html, app.js, app.css, sw.js, manifest.webmanifest, icon.svg,
//   icon-192.png, icon-512.png (the PNGs are drawn here, no binary files in git).
// Usage: node build.mjs [--dev]   (--dev: no minification, inline source maps)

import * as esbuild from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(here, '../internal/web/dist');
const dev = process.argv.includes('--dev');

// Start clean, but keep .keep (the Go embed needs the directory).
mkdirSync(out, { recursive: true });
for (const f of readdirSync(out)) {
  if (f !== '.keep') rmSync(join(out, f), { recursive: true, force: true });
}
writeFileSync(join(out, '.keep'), '');

const common = {
  bundle: true,
  minify: !dev,
  sourcemap: dev ? 'inline' : false,
  target: ['es2020', 'chrome90', 'firefox90', 'safari15'],
  legalComments: 'none',
  logLevel: 'warning',
  define: { 'process.env.NODE_ENV': dev ? '"development"' : '"production"' },
};

await Promise.all([
  esbuild.build({
    ...common,
    entryPoints: { app: join(here, 'src/main.tsx') },
    outdir: out,
    format: 'iife',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    loader: { '.woff': 'file', '.woff2': 'file' },
  }),
  // The syntax highlighter: loaded by the page on first use (src/highlight.ts).
  esbuild.build({
    ...common,
    entryPoints: { hl: join(here, 'src/hl.ts') },
    outdir: out,
    format: 'iife',
  }),
  esbuild.build({
    ...common,
    entryPoints: { sw: join(here, 'src/sw.ts') },
    outdir: out,
    format: 'iife',
  }),
]);

for (const f of ['index.html', 'manifest.webmanifest', 'icon.svg']) {
  copyFileSync(join(here, 'public', f), join(out, f));
}
writeFileSync(join(out, 'icon-192.png'), drawIcon(192));
writeFileSync(join(out, 'icon-512.png'), drawIcon(512));

for (const f of ['app.js', 'app.css', 'hl.js', 'sw.js', 'index.html']) {
  if (!existsSync(join(out, f))) throw new Error(`build: ${f} is missing`);
}
const sizes = readdirSync(out)
  .filter((f) => f !== '.keep')
  .map((f) => `${f} ${(statSync(join(out, f)).size / 1024).toFixed(1)} KiB`);
console.log(`web: built into ${out}\n  ${sizes.join('\n  ')}`);

// ---- the icon, as icon.svg draws it, rasterized with 4x4 supersampling ----

function drawIcon(size) {
  const s = size / 64; // icon.svg's viewBox is 64x64
  const bg = [0x15, 0x19, 0x22];
  const ring = [0x6e, 0xa8, 0xff];
  const dots = [
    { x: 25, y: 27.5, r: 5.5, c: [0xf5, 0xa5, 0x24] },
    { x: 39, y: 27.5, r: 5.5, c: [0xa7, 0x8b, 0xfa] },
    { x: 32, y: 39.5, r: 5.5, c: [0x7b, 0x84, 0x94] },
  ];
  const dash = 7.7;
  const gap = 3.3;
  const R = 21;
  const half = 2; // stroke width 4
  const SS = 4;
  const px = Buffer.alloc(size * size * 4);
  const sample = (x, y) => {
    // x, y in viewBox units; returns [r,g,b,a]
    const rr = 14;
    const cx = Math.min(Math.max(x, rr), 64 - rr);
    const cy = Math.min(Math.max(y, rr), 64 - rr);
    if (x < 0 || y < 0 || x > 64 || y > 64 || (x - cx) ** 2 + (y - cy) ** 2 > rr * rr) return null;
    for (const d of dots) if ((x - d.x) ** 2 + (y - d.y) ** 2 <= d.r * d.r) return d.c;
    const dist = Math.hypot(x - 32, y - 32);
    if (Math.abs(dist - R) <= half) {
      // SVG circles start at 3 o'clock and go clockwise.
      let a = Math.atan2(y - 32, x - 32);
      if (a < 0) a += 2 * Math.PI;
      const along = (a * R) % (dash + gap);
      if (along <= dash) return ring;
    }
    return bg;
  };
  for (let py = 0; py < size; py++) {
    for (let qx = 0; qx < size; qx++) {
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let sy = 0; sy < SS; sy++) {
        for (let sx = 0; sx < SS; sx++) {
          const c = sample((qx + (sx + 0.5) / SS) / s, (py + (sy + 0.5) / SS) / s);
          if (!c) continue;
          r += c[0];
          g += c[1];
          b += c[2];
          a++;
        }
      }
      const i = (py * size + qx) * 4;
      if (a > 0) {
        px[i] = Math.round(r / a);
        px[i + 1] = Math.round(g / a);
        px[i + 2] = Math.round(b / a);
      }
      px[i + 3] = Math.round((a / (SS * SS)) * 255);
    }
  }
  return png(size, size, px);
}

function png(w, h, rgba) {
  const raw = Buffer.alloc((w * 4 + 1) * h);
  for (let y = 0; y < h; y++) {
    raw[y * (w * 4 + 1)] = 0; // filter: none
    rgba.copy(raw, y * (w * 4 + 1) + 1, y * w * 4, (y + 1) * w * 4);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

function crc32(buf) {
  let table = crc32.table;
  if (!table) {
    table = crc32.table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let c = 0xffffffff;
  for (const b of buf) c = table[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
