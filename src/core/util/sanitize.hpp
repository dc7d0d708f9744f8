// One sanitiser per output medium, for text that comes from outside the program (strings in
// result files, plans, environment fields, host names) on its way to a reader: a terminal,
// a Markdown viewer, a browser or a spreadsheet. Every writer of that medium uses it, so a
// file cannot forge lines, retitle a terminal, inject markup or plant a formula. Torch-free.
//
// Characters escaped as visible "\u00XX" / "\uXXXX" text (the same escape a JSON string
// reads back as the same character, so a JSON document written through the terminal path
// keeps its meaning): C0 controls (U+0000-U+001F) but those a medium keeps, DEL (U+007F), C1
// controls (U+0080-U+009F: a terminal reads U+009B as CSI), and the bidirectional formatting
// characters U+202A-U+202E and U+2066-U+2069, which reorder what a reader sees (Boucher and
// Anderson, "Trojan Source", 2021). Bytes that are not UTF-8 become U+FFFD first.
#pragma once

#include <string>
#include <string_view>

namespace ddpbench {

/// Text for a terminal: every character above escaped but '\n' and '\t', so lines stay lines
/// and no escape sequence reaches the terminal. Never throws (but std::bad_alloc).
std::string terminal_text(std::string_view s);

/// One line of terminal text (a table cell, a name inside a sentence): terminal_text with
/// '\n', '\r' and '\t' escaped too, so a string cannot start a line of its own.
std::string terminal_line(std::string_view s);

/// A piece of Markdown (GitHub-flavoured): terminal_line's escapes, '<' as "&lt;" (no raw
/// HTML: <script>, <img onerror>), '|' as "\|" (no extra table column) and '\' as "\\". With
/// `starts_block` (a paragraph's text) a '#' or '>' that starts it is backslash-escaped too (no
/// heading or quote made by a name; a "- " list item there is the program's own).
std::string markdown_text(std::string_view s, bool starts_block = false);

/// Text for HTML element content or a double-quoted attribute: '&', '<', '>', '"' and '\''
/// as entities (OWASP Cross Site Scripting Prevention Cheat Sheet, rule 1), and
/// terminal_text's escapes, so no control character reaches the page.
std::string html_escape(const std::string& s);

/// One CSV field for a string value (RFC 4180 quoting, with OWASP's CSV Injection rule): a
/// value that a spreadsheet would evaluate — starting with '=', '+', '-', '@', TAB or CR — gets
/// a leading "'", control characters are escaped as terminal_line does, and the field is
/// quoted (quotes doubled) when it holds a comma, quote, or the prefix. Numbers are not
/// strings: write them with csv_field.
std::string csv_text(std::string_view s);

/// RFC 4180 field for a value the program formatted itself (a number, a key): quoted (with
/// doubled quotes) when it holds a comma, quote or newline.
std::string csv_field(const std::string& s);

}  // namespace ddpbench
