#!/usr/bin/python3
"""Writes scikit-learn's bundled UCI handwritten digits as MNIST IDX files.

The 1797 8x8 images of `sklearn.datasets.load_digits` (shipped inside
python3-sklearn, nothing is downloaded) become SIZE x SIZE images: pixel
values 0..16 are scaled to bytes (round(v * 255 / 16)), the 8x8 grid is
upsampled bilinearly (half-pixel centres, edges clamped) to (SIZE-4) x
(SIZE-4) and centred with a 2-pixel black border, as MNIST centres its
20x20 digits in 28x28. The first 1500 images, in the package's order, are
the training split and the remaining 297 the test split. The output is a
pure function of the package's data and SIZE (no randomness), so
`xwires train --data mnist:DIR` and every framework read the same bytes.

Usage: make_digits.py OUT_DIR [--size 28]
Writes OUT_DIR/{train,t10k}-{images-idx3,labels-idx1}-ubyte.
"""
import argparse
import os
import struct
import sys

import numpy as np

TRAIN = 1500


def upsample(images, inner):
    """Bilinear resize of [N, 8, 8] floats to [N, inner, inner]."""
    src = images.shape[1]
    pos = (np.arange(inner, dtype=np.float64) + 0.5) * src / inner - 0.5
    pos = np.clip(pos, 0, src - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, src - 1)
    frac = pos - lo
    rows = images[:, lo, :] * (1 - frac)[None, :, None] + images[:, hi, :] * frac[None, :, None]
    return rows[:, :, lo] * (1 - frac)[None, None, :] + rows[:, :, hi] * frac[None, None, :]


def write_idx(path, array, magic):
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack(">I", magic))
        for d in array.shape:
            f.write(struct.pack(">I", d))
        f.write(np.ascontiguousarray(array, dtype=np.uint8).tobytes())
    os.replace(path + ".tmp", path)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--size", type=int, default=28, help="image side in pixels (>= 12)")
    args = parser.parse_args(argv)
    if args.size < 12:
        parser.error("--size must be at least 12")
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        sys.exit("make_digits.py: python3-sklearn is not installed (bash scripts/setup.sh)")
    digits = load_digits()
    images = digits.images.astype(np.float64) * (255.0 / 16.0)
    labels = digits.target.astype(np.uint8)
    inner = upsample(images, args.size - 4)
    out = np.zeros((len(images), args.size, args.size), dtype=np.uint8)
    out[:, 2:-2, 2:-2] = np.clip(np.rint(inner), 0, 255).astype(np.uint8)
    os.makedirs(args.out_dir, exist_ok=True)
    splits = {"train": slice(0, TRAIN), "t10k": slice(TRAIN, len(out))}
    for name, part in splits.items():
        write_idx(os.path.join(args.out_dir, f"{name}-images-idx3-ubyte"), out[part], 0x803)
        write_idx(os.path.join(args.out_dir, f"{name}-labels-idx1-ubyte"), labels[part], 0x801)
    print(f"make_digits.py: {TRAIN} train / {len(out) - TRAIN} test {args.size}x{args.size} "
          f"digits in {args.out_dir}")


if __name__ == "__main__":
    main(sys.argv[1:])
