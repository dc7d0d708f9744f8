#!/usr/bin/env python3
"""Parses an HTML file with Python's html.parser and checks that every element is
closed in order (void elements excepted); prints {"ok", "tables", "svgs", "h2"} as JSON.
Used by tests/unit/test_plots_html.cpp. Usage: check_html.py FILE"""
import json
import sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Checker(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.counts, self.h2 = [], [], {"table": 0, "svg": 0}, []
        self._in_h2 = False

    def handle_starttag(self, tag, attrs):
        if tag in self.counts:
            self.counts[tag] += 1
        if tag == "h2":
            self._in_h2 = True
            self.h2.append("")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        if tag in self.counts:
            self.counts[tag] += 1

    def handle_endtag(self, tag):
        if tag == "h2":
            self._in_h2 = False
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> (open: {self.stack[-3:]})")
        else:
            self.stack.pop()

    def handle_data(self, data):
        if self._in_h2:
            self.h2[-1] += data


c = Checker()
with open(sys.argv[1], encoding="utf-8") as f:
    c.feed(f.read())
c.close()
ok = not c.errors and not c.stack
print(json.dumps({"ok": ok, "errors": c.errors[:5], "unclosed": c.stack[-5:], "tables": c.counts["table"],
                  "svgs": c.counts["svg"], "h2": c.h2}))
