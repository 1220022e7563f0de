// Draws images/icon.png (128×128, the Marketplace size): a check mark over a flame-orange rounded
// square. Plain node (zlib for the PNG's deflate), so the icon can be regenerated anywhere:
//   node images/make-icon.mjs
import { Buffer } from "node:buffer";
import { writeFileSync } from "node:fs";
import { URL } from "node:url";
import { deflateSync } from "node:zlib";

const SIZE = 128;
const SAMPLES = 4; // per axis: 16 samples a pixel smooth the edges
const BACKGROUND = [238, 76, 44];
const MARK = [255, 255, 255];

/** Signed distance to a rounded square centred in the image (negative inside). */
function roundedSquare(x, y, half, radius) {
  const dx = Math.abs(x - SIZE / 2) - (half - radius);
  const dy = Math.abs(y - SIZE / 2) - (half - radius);
  const outside = Math.hypot(Math.max(dx, 0), Math.max(dy, 0));
  return outside + Math.min(Math.max(dx, dy), 0) - radius;
}

/** Distance to the segment from (ax, ay) to (bx, by). */
function segment(x, y, ax, ay, bx, by) {
  const vx = bx - ax;
  const vy = by - ay;
  const t = Math.max(0, Math.min(1, ((x - ax) * vx + (y - ay) * vy) / (vx * vx + vy * vy)));
  return Math.hypot(x - ax - t * vx, y - ay - t * vy);
}

function shade(x, y) {
  if (roundedSquare(x, y, 60, 22) > 0) return undefined;
  const check = Math.min(segment(x, y, 34, 66, 55, 87), segment(x, y, 55, 87, 95, 41));
  return check <= 9 ? MARK : BACKGROUND;
}

// Each row: a filter byte (0, none) then RGBA pixels.
const rows = Buffer.alloc(SIZE * (1 + SIZE * 4));
for (let y = 0; y < SIZE; y++) {
  rows[y * (1 + SIZE * 4)] = 0;
  for (let x = 0; x < SIZE; x++) {
    const sum = [0, 0, 0];
    let covered = 0;
    for (let sy = 0; sy < SAMPLES; sy++) {
      for (let sx = 0; sx < SAMPLES; sx++) {
        const colour = shade(x + (sx + 0.5) / SAMPLES, y + (sy + 0.5) / SAMPLES);
        if (colour) {
          covered++;
          colour.forEach((value, i) => (sum[i] += value));
        }
      }
    }
    const offset = y * (1 + SIZE * 4) + 1 + x * 4;
    for (let i = 0; i < 3; i++) rows[offset + i] = covered ? Math.round(sum[i] / covered) : 0;
    rows[offset + 3] = Math.round((255 * covered) / (SAMPLES * SAMPLES));
  }
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

const header = Buffer.alloc(13);
header.writeUInt32BE(SIZE, 0);
header.writeUInt32BE(SIZE, 4);
header[8] = 8; // bits per channel
header[9] = 6; // colour type: RGBA
// Bytes 10-12: deflate compression, adaptive filtering, no interlace (all zero).

const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  chunk("IHDR", header),
  chunk("IDAT", deflateSync(rows, { level: 9 })),
  chunk("IEND", Buffer.alloc(0)),
]);
writeFileSync(new URL("icon.png", import.meta.url), png);
console.log(`images/icon.png: ${png.length} bytes`);
