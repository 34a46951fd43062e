// The tensor exchange file of `xwires conformance` (api/conformance_exchange.h):
// "XWTENS01", uint32 count, then per tensor uint32 name length, name,
// uint8 dtype (0 float32, 1 int64), uint8 rank, int64 dims, elements; all
// little-endian.
'use strict';
const fs = require('fs');

const MAGIC = 'XWTENS01';

// Map name -> {dtype, shape, data (Float32Array or BigInt64Array)}.
function read(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 8) !== MAGIC) throw new Error(`${file}: not an exchange file`);
  const out = new Map();
  let pos = 8;
  const count = buf.readUInt32LE(pos);
  pos += 4;
  for (let i = 0; i < count; ++i) {
    const len = buf.readUInt32LE(pos);
    pos += 4;
    const name = buf.toString('utf8', pos, pos + len);
    pos += len;
    const dtype = buf.readUInt8(pos), rank = buf.readUInt8(pos + 1);
    pos += 2;
    const shape = [];
    for (let d = 0; d < rank; ++d, pos += 8) shape.push(Number(buf.readBigInt64LE(pos)));
    const n = shape.reduce((a, b) => a * b, 1);
    const bytes = n * (dtype === 1 ? 8 : 4);
    const copy = new Uint8Array(buf.subarray(pos, pos + bytes)).buffer;  // aligned
    pos += bytes;
    out.set(name, {dtype, shape, data: dtype === 1 ? new BigInt64Array(copy) : new Float32Array(copy)});
  }
  return out;
}

// tensors: [{name, dtype, shape, data}] in file order.
function write(file, tensors) {
  const parts = [Buffer.from(MAGIC, 'latin1')];
  const head = Buffer.alloc(4);
  head.writeUInt32LE(tensors.length);
  parts.push(head);
  for (const t of tensors) {
    const name = Buffer.from(t.name, 'utf8');
    const meta = Buffer.alloc(4 + name.length + 2 + 8 * t.shape.length);
    meta.writeUInt32LE(name.length, 0);
    name.copy(meta, 4);
    meta.writeUInt8(t.dtype, 4 + name.length);
    meta.writeUInt8(t.shape.length, 5 + name.length);
    t.shape.forEach((d, i) => meta.writeBigInt64LE(BigInt(d), 6 + name.length + 8 * i));
    parts.push(meta, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
  }
  fs.writeFileSync(file, Buffer.concat(parts));
}

module.exports = {read, write};
