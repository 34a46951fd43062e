"""The tensor exchange file of `xwires conformance` (api/conformance_exchange.h).

"XWTENS01", uint32 count, then per tensor: uint32 name length, the name,
uint8 dtype (0 float32, 1 int64), uint8 rank, int64 dims, the elements
row-major; all little-endian.
"""
import struct

import numpy as np

MAGIC = b"XWTENS01"
_DTYPES = {0: np.dtype("<f4"), 1: np.dtype("<i8")}


def read(path):
    """An insertion-ordered dict name -> numpy array (float32 or int64)."""
    with open(path, "rb") as f:
        buf = f.read()
    if buf[:8] != MAGIC:
        raise ValueError(f"{path}: not an exchange file")
    (count,), pos, out = struct.unpack_from("<I", buf, 8), 12, {}
    for _ in range(count):
        (n,) = struct.unpack_from("<I", buf, pos)
        name = buf[pos + 4:pos + 4 + n].decode()
        pos += 4 + n
        dtype, rank = buf[pos], buf[pos + 1]
        shape = struct.unpack_from(f"<{rank}q", buf, pos + 2)
        pos += 2 + 8 * rank
        dt = _DTYPES[dtype]
        size = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        out[name] = np.frombuffer(buf[pos:pos + size], dtype=dt).reshape(shape).copy()
        pos += size
    return out


def write(path, tensors):
    """tensors: dict name -> array; int64 arrays stay int64, others float32."""
    parts = [MAGIC, struct.pack("<I", len(tensors))]
    for name, value in tensors.items():
        a = np.asarray(value)
        code = 1 if a.dtype == np.int64 else 0
        a = np.array(a, dtype=_DTYPES[code], order="C")  # keeps 0-d arrays 0-d
        raw = name.encode()
        parts += [struct.pack("<I", len(raw)), raw, struct.pack("<BB", code, a.ndim),
                  struct.pack(f"<{a.ndim}q", *a.shape), a.tobytes()]
    with open(path, "wb") as f:
        f.write(b"".join(parts))
