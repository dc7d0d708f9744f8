#!/usr/bin/env python3
"""Loads an HTML page in headless Chromium at given viewport widths (the DevTools protocol over
--remote-debugging-pipe, so any width, 400 px included, and no network port) and prints, as
JSON per width, what a reader sees: the page's width against the window's, per table whether
its first column and its key column (th.key) lie inside the window, per figure the smallest
plot text in CSS px, the texts drawn outside their SVG and whether the figure follows its
table; optionally a full-page screenshot per width.
Used by tests/unit/test_report_page.cpp; also by hand:
  page_probe.py PAGE.html --width 400 --width 1400 [--screenshot PREFIX [--split PX]]  (PREFIX-400.png, or PREFIX-400-00.png ...)
Exit 0 with the JSON on stdout; 2 when Chromium cannot be started or does not answer."""
import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

MEASURE = r"""
(() => {
  const W = window.innerWidth, out = {inner: W, scroll: document.documentElement.scrollWidth,
    errors: window.__probeErrors || 0, tables: [], figures: [], order: []};
  const inside = (r) => r.width > 0 && r.left >= -0.5 && r.right <= W + 0.5;
  const title = (t) => { const s = t.closest('section'); const h = s && s.querySelector('h3');
                         return h ? h.textContent.trim().slice(0, 80) : ''; };
  document.querySelectorAll('table').forEach((t, i) => {
    const ths = Array.from(t.querySelectorAll('thead th'));
    const shown = ths.filter(th => th.getBoundingClientRect().width > 0);
    const key = t.querySelector('thead th.key');
    const first = ths[0];
    out.tables.push({index: i, id: t.id, title: title(t), columns: ths.length, shown: shown.length,
      visible: shown.filter(th => inside(th.getBoundingClientRect())).length,
      first: first ? first.textContent.trim() : null, first_visible: !!first && inside(first.getBoundingClientRect()),
      key: key ? key.textContent.trim() : null, key_visible: !!key && inside(key.getBoundingClientRect())});
  });
  document.querySelectorAll('figure').forEach((f) => {
    const svg = f.querySelector('svg');
    const rec = {id: f.id, for: f.dataset.table || '', follows: null, min_font_px: null, clipped: [], width: 0,
                 texts: 0, caption: (f.querySelector('figcaption') || {}).textContent || ''};
    if (f.dataset.table) {
      const t = document.getElementById(f.dataset.table);
      // The figure comes after its table, and no other table lies between them.
      let between = false;
      if (t) document.querySelectorAll('table').forEach((o) => {
        if (o !== t && (t.compareDocumentPosition(o) & Node.DOCUMENT_POSITION_FOLLOWING) &&
            (o.compareDocumentPosition(f) & Node.DOCUMENT_POSITION_FOLLOWING)) between = true;
      });
      rec.follows = !!t && !!(t.compareDocumentPosition(f) & Node.DOCUMENT_POSITION_FOLLOWING) && !between;
    }
    if (svg) {
      const sr = svg.getBoundingClientRect();
      rec.width = sr.width;
      const vb = svg.viewBox && svg.viewBox.baseVal;
      const scale = vb && vb.width ? sr.width / vb.width : 1;
      svg.querySelectorAll('text').forEach((t) => {
        if (!t.textContent.trim()) return;
        rec.texts++;
        const px = parseFloat(getComputedStyle(t).fontSize) * scale;
        if (rec.min_font_px === null || px < rec.min_font_px) rec.min_font_px = px;
        const r = t.getBoundingClientRect();
        if (r.left < sr.left - 0.5 || r.right > sr.right + 0.5 || r.top < sr.top - 0.5 || r.bottom > sr.bottom + 0.5)
          rec.clipped.push(t.textContent.trim().slice(0, 80));
      });
    }
    out.figures.push(rec);
  });
  // The first elements of the page, in order: what a reader meets first.
  document.querySelectorAll('body > *').forEach((e, i) => {
    if (i < 6) out.order.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
                              (e.className ? '.' + e.className : ''));
  });
  return JSON.stringify(out);
})()
"""


class Pipe:
    """The DevTools protocol over Chromium's --remote-debugging-pipe: JSON messages ended by NUL,
    commands on the child's fd 3, answers and events on its fd 4."""

    def __init__(self, chromium, flags, timeout):
        self.timeout = timeout
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        def fds():  # in the child: the pipe's ends on fds 3 and 4 (copies first: either may be 3 or 4)
            a, b = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen([chromium] + flags, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=(None if os.environ.get("PROBE_DEBUG") else subprocess.DEVNULL), preexec_fn=fds, pass_fds=(3, 4))
        os.close(to_child_r)
        os.close(from_child_w)
        self.buf, self.next_id, self.events = b"", 0, []

    def _read(self, deadline):
        import select
        while b"\0" not in self.buf:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError("no answer from Chromium")
            r, _, _ = select.select([self.from_child], [], [], left)
            if r:
                chunk = os.read(self.from_child, 1 << 20)
                if not chunk:
                    raise EOFError("Chromium closed the pipe")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None):
        self.next_id += 1
        m = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            m["sessionId"] = session
        os.write(self.to_child, json.dumps(m).encode() + b"\0")
        deadline = time.time() + self.timeout
        while True:
            r = self._read(deadline)
            if r.get("id") == self.next_id:
                if "error" in r:
                    raise RuntimeError(f"{method}: {r['error']}")
                return r.get("result", {})
            self.events.append(r)

    def wait_event(self, method):
        deadline = time.time() + self.timeout
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                del self.events[i]
                return e
        while True:
            e = self._read(deadline)
            if e.get("method") == method:
                return e
            self.events.append(e)

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def probe(page, widths, shot_prefix, split, timeout):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not chromium:
        print("chromium not found", file=sys.stderr)
        return 2
    profile = tempfile.mkdtemp(prefix="page-probe-")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", "--hide-scrollbars", "--remote-debugging-pipe",
             "--user-data-dir=" + profile, "about:blank"]
    url = "file://" + os.path.abspath(page)
    result = {}
    p = None
    try:
        p = Pipe(chromium, flags, timeout)
        for w in widths:
            target = p.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            s = p.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            p.call("Page.enable", session=s)
            p.call("Emulation.setDeviceMetricsOverride",
                   {"width": w, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=s)
            # Errors counted from the first script on.
            p.call("Page.addScriptToEvaluateOnNewDocument",
                   {"source": "window.__probeErrors=0;window.addEventListener('error',"
                              "function(){window.__probeErrors++;},true);"}, session=s)
            p.call("Page.navigate", {"url": url}, session=s)
            p.wait_event("Page.loadEventFired")
            r = p.call("Runtime.evaluate", {"expression": MEASURE, "returnByValue": True}, session=s)
            if "exceptionDetails" in r:
                raise RuntimeError(json.dumps(r["exceptionDetails"])[:500])
            result[str(w)] = json.loads(r["result"]["value"])
            if shot_prefix:
                m = p.call("Page.getLayoutMetrics", session=s)
                h = int(m.get("cssContentSize", m.get("contentSize"))["height"])
                # The whole page, or pieces of `split` px from the top (an image viewer shrinks
                # a page-long image beyond reading).
                step = split or h
                shots = []
                for k, y in enumerate(range(0, min(h, 30000), step)):
                    shot = p.call("Page.captureScreenshot",
                                  {"format": "png", "captureBeyondViewport": True,
                                   "clip": {"x": 0, "y": y, "width": w, "height": min(step, h - y), "scale": 1}},
                                  session=s)
                    path = f"{shot_prefix}-{w}.png" if not split else f"{shot_prefix}-{w}-{k:02d}.png"
                    with open(path, "wb") as f:
                        f.write(base64.b64decode(shot["data"]))
                    shots.append(path)
                result[str(w)]["screenshots"] = shots
            p.call("Target.closeTarget", {"targetId": target})
    except (TimeoutError, EOFError, RuntimeError, OSError) as e:
        print(f"chromium: {e}", file=sys.stderr)
        return 2
    finally:
        if p:
            p.close()
        shutil.rmtree(profile, ignore_errors=True)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    a = argparse.ArgumentParser()
    a.add_argument("page")
    a.add_argument("--width", type=int, action="append", required=True)
    a.add_argument("--screenshot", default="")
    a.add_argument("--split", type=int, default=0, help="screenshots in pieces of this many px")
    a.add_argument("--timeout", type=float, default=60)
    o = a.parse_args()
    sys.exit(probe(o.page, o.width, o.screenshot, o.split, o.timeout))
