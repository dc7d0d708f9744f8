#!/usr/bin/env python3
"""Prints "WxH dark=N" for an 8-bit RGB or RGBA PNG: N pixels whose darkest channel is below
200 (text, lines, bars). A test uses it to tell a rendered page from a blank screenshot."""
import struct
import sys
import zlib


def rows(path):
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        sys.exit(f'{path}: not a PNG')
    pos, idat, w = 8, b'', 0
    while pos < len(data):
        n, = struct.unpack('>I', data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
            if depth != 8 or ctype not in (2, 6):
                sys.exit(f'{path}: only 8-bit RGB or RGBA is read')
        elif kind == b'IDAT':
            idat += body
        pos += 12 + n
    bpp = 3 if ctype == 2 else 4
    raw, stride, prev, i = zlib.decompress(idat), w * bpp, bytearray(w * bpp), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):  # PNG's five filters (PNG specification, section 9)
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        yield w, h, bpp, line
        prev = line


dark, size = 0, ''
for w, h, bpp, line in rows(sys.argv[1]):
    size = f'{w}x{h}'
    dark += sum(1 for x in range(0, w * bpp, bpp) if min(line[x:x + 3]) < 200)
print(f'{size} dark={dark}')
