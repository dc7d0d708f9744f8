// Typed tables and their printers: a table is defined once (columns with a key, a header,
// a unit and a formatter) and every printer — terminal text, Markdown, CSV, JSON, HTML —
// renders any table. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include "core/util/sanitize.hpp"  // csv_field, html_escape: the printers' sanitisers

#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace ddpbench {

/// One cell: missing (rendered "n/a" in text, empty in CSV, null in JSON), an integer, a
/// number or a string.
using Value = std::variant<std::monostate, long long, double, std::string>;

/// One column of a table.
struct Column {
  std::string key;     ///< machine name (CSV header, JSON field), e.g. "per_gpu_ex_s"
  std::string header;  ///< human header, e.g. "per-GPU ex/s"
  std::string unit;    ///< unit of the raw value, e.g. "ex/s", "s", "fraction", "bytes"; "" for labels
  /// Text for people (terminal, Markdown, HTML); the raw value goes to CSV and JSON.
  std::function<std::string(const Value&)> format;
  bool in_text = true;  ///< false: CSV and JSON only (e.g. the p5/p95 behind the plots)
};

/// Column formatters. Each renders a missing value as "n/a".
namespace fmtcol {
std::function<std::string(const Value&)> plain();              ///< integers and strings as they are; numbers %g
std::function<std::string(const Value&)> fixed(int decimals);  ///< 12.35
std::function<std::string(const Value&)> percent();            ///< a fraction as 84.0%
std::function<std::string(const Value&)> times();              ///< a ratio as 1.78x
std::function<std::string(const Value&)> sig3();               ///< three significant digits (0.0868)
std::function<std::string(const Value&)> bytes();              ///< bytes as 3.08 GiB / 512.0 MiB
std::function<std::string(const Value&)> size();               ///< a message size in bytes as 1 KiB / 256 MiB / 1.5 GiB
std::function<std::string(const Value&)> duration();           ///< seconds as 45.2 s / 16.4 min / 2.78 h
}  // namespace fmtcol

/// A titled table: what it is about (`context`, e.g. device and model, repeated on every
/// CSV row), typed rows and notes printed under it.
struct Table {
  std::string kind;  ///< what the table is ("weak", "strong", "comparison", "cost", ...)
  std::string title;
  std::vector<std::pair<std::string, Value>> context;
  std::vector<Column> columns;
  std::vector<std::vector<Value>> rows;  ///< one Value per column
  std::vector<std::string> notes;
  /// The document section the table belongs to ("Throughput scaling"): Markdown and HTML print it
  /// as a heading and text as a banner where it changes; "" for none.
  std::string section;
  /// Keys of the columns that name a row: text repeats them in every part of a table too wide
  /// for its width. Empty: the first column shown and the file column (key or header "file": the
  /// launch every report row names).
  std::vector<std::string> label_columns;
  /// Text only: each row as one line from its formatted cells (e.g. a sentence per row) instead
  /// of padded columns, an empty cell given as "n/a"; empty for columns.
  std::function<std::string(const std::vector<std::string>&)> text_line;
  /// Text only: each row as this line (one per row, in order), given whole (a claim's sentence,
  /// core/analysis/claim.hpp); when set it takes the place of text_line and of the columns.
  std::vector<std::string> row_lines;

  /// Index of the column with `key`; throws std::logic_error when there is none (a
  /// misspelt key is a bug, never a silently empty cell).
  size_t col(const std::string& key) const;
};

/// Output formats of the printers.
enum class TableFormat { text, markdown, csv, json };

/// A column and how to read its value from a row of type Row: one entry of a table's
/// catalogue of columns (make_table).
template <typename Row>
struct Col {
  Column column;
  std::function<Value(const Row&)> get;
};

/// A table of kind `kind` whose columns are `cols` and whose rows are each `get` applied to
/// each of `rows`, in order.
template <typename Row>
Table make_table(std::string kind, std::string title, std::vector<std::pair<std::string, Value>> context,
                 const std::vector<Col<Row>>& cols, const std::vector<Row>& rows) {
  Table t;
  t.kind = std::move(kind);
  t.title = std::move(title);
  t.context = std::move(context);
  for (const auto& c : cols) t.columns.push_back(c.column);
  for (const auto& r : rows) {
    std::vector<Value> cells;
    for (const auto& c : cols) cells.push_back(c.get(r));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

/// Parses "table", "md", "csv" or "json"; throws UsageError naming `flag` otherwise.
TableFormat parse_table_format(const std::string& name, const std::string& flag = "--format");

/// Renders `tables` in `format` (a table without rows prints its title and notes alone, in
/// text, Markdown and HTML):
/// text — per table the title, a header underlined with dashes, columns padded (the first
/// left-aligned, the rest right-aligned), notes; tables separated by a blank line;
/// markdown — "### title", a GitHub table, notes as paragraphs ('|' escaped);
/// csv — one RFC 4180 CSV: columns "table", the union of the context keys, then the union
/// of the column keys, each union sorted (the same columns in the same order whatever tables
/// an invocation prints); one line per table row, raw values;
/// json — {"tables": [table_json(t)...]}.
/// text_width > 0 (text only): a table wider than that many columns is printed in parts, each
/// repeating the columns that name a row (Table::label_columns: by default the first and the file
/// column), and titles and notes are wrapped at spaces; 0: one line per row.
std::string render_tables(const std::vector<Table>& tables, TableFormat format, size_t text_width = 0);

/// One table as JSON: {kind, title, <context fields>, columns: [{key, header, unit}],
/// rows: [{<column key>: raw value}], notes}.
nlohmann::json table_json(const Table& t);

/// A cell's raw value as JSON (null when missing).
nlohmann::json value_json(const Value& v);

/// How html_table draws a table on a page.
struct HtmlTableOptions {
  std::string id;   ///< the <table> element's id; "" for none
  std::string key;  ///< key of the table's key column (its cells get class "key"); "" for none
  /// Keys of the columns a narrow screen keeps: the others get class "wide" (the page's
  /// stylesheet hides them there) and the table class "narrow"; empty: every column. The
  /// first column (the row's label, class "label") and the key column are always kept.
  std::vector<std::string> narrow;
};

/// One table as an HTML <table> element alone, text escaped: a header row and a row per table
/// row, numbers (a column with a unit, past the first) with class "num", a cell holding a word
/// of more than 16 characters (a path, "(negative_ddp_overhead)") with class "long" and a <wbr>
/// after each '_' and '/' (a narrow page lets it break anywhere); `o` adds the id, the key
/// column and the columns a narrow screen drops. A table without rows is "".
std::string html_table(const Table& t, const HtmlTableOptions& o = {});

/// The number of columns html_table draws for `t` (those shown in text with a value).
size_t html_table_columns(const Table& t);

/// One table as an HTML fragment (<h3> title, html_table, notes), text escaped.
std::string render_table_html(const Table& t);

}  // namespace ddpbench
