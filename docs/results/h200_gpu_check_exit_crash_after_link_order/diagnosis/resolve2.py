import bisect, re, subprocess, sys
cache = {}
def syms(lib):
    if lib not in cache:
        out = []
        for flags in (["-D"], []):
            txt = subprocess.run(["nm", "-n", "-C", "--defined-only"] + flags + [lib], capture_output=True, text=True).stdout
            for l in txt.splitlines():
                p = l.split(" ", 2)
                if len(p) == 3 and p[1] in "tTwWiu":
                    try: out.append((int(p[0], 16), p[2]))
                    except ValueError: pass
        out.sort(); cache[lib] = out
    return cache[lib]
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"stack\[\d+\] \S+ (\S+?)\(\+0x([0-9a-f]+)\)", line)
    if not m: continue
    s = syms(m.group(1)); off = int(m.group(2), 16)
    i = bisect.bisect_right([a for a, _ in s], off) - 1
    print(line.rstrip(), "=>", f"{s[i][1][:160]}+0x{off - s[i][0]:x}" if i >= 0 else "?")
