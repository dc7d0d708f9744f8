// A report page as a reader sees it in headless Chromium (tests/tools/page_probe.py), and the
// checks every page must pass at each width.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/testutil.hpp"

namespace ddpbench::testutil {

/// Why the page cannot be probed here ("" when it can): Chromium or python3 missing.
inline std::string page_probe_missing() {
  if (!have("chromium") && !have("chromium-browser") && !have("google-chrome"))
    return "chromium not installed (apt-get install chromium)";
  if (!have("python3")) return "python3 not installed";
  return "";
}

/// page_probe.py's measures of `page` at 400 and 1,400 px, keyed "400" and "1400"; with
/// `shots`, screenshots of the page in pieces 1,400 px tall, `<shots>-400-00.png` (the top),
/// `<shots>-400-01.png`, ..., `<shots>-1400-00.png`, .... Fails the test (and
/// returns null) when Chromium does not answer.
inline nlohmann::json probe_page(const std::filesystem::path& page, const std::string& shots = "") {
  const auto o = run("timeout 120 python3 " DDPBENCH_SOURCE_DIR "/tests/tools/page_probe.py " + page.string() +
                     " --width 400 --width 1400" + (shots.empty() ? "" : " --screenshot " + shots + " --split 1400"));
  EXPECT_EQ(o.code, 0) << o.err;
  if (o.code != 0) return nullptr;
  return nlohmann::json::parse(o.out, nullptr, false);
}

/// What a page must do at every width `m` measured: no sideways scroll of the page, no error
/// event; every table's first column (its row label) and key column inside the window; every
/// plot (`drawn` of them) laid out with a size, after its own table with no other table
/// between, its text at 10 px or more and none of it outside the SVG; the headline the first
/// block after the title when `headline`.
inline void expect_page_reads(const nlohmann::json& m, size_t drawn, bool headline) {
  const int w = m.at("inner").get<int>();
  SCOPED_TRACE(std::to_string(w) + " px");
  EXPECT_LE(m.at("scroll").get<int>(), w) << "the page scrolls sideways";
  EXPECT_EQ(m.at("errors").get<int>(), 0) << "error events";
  for (const auto& t : m.at("tables")) {
    const std::string what = t.at("id").get<std::string>() + " " + t.at("title").get<std::string>();
    EXPECT_TRUE(t.at("first_visible").get<bool>()) << what << ": its first column is outside the window";
    if (!t.at("key").is_null())
      EXPECT_TRUE(t.at("key_visible").get<bool>()) << what << ": its key column '" << t.at("key") << "' is outside the window";
  }
  EXPECT_EQ(m.at("figures").size(), drawn) << "one figure per plot drawn";
  for (const auto& f : m.at("figures")) {
    const std::string id = f.at("id").get<std::string>();
    EXPECT_GT(f.at("width").get<double>(), 100) << id;
    EXPECT_GT(f.at("texts").get<int>(), 0) << id;
    if (f.at("texts").get<int>() > 0) EXPECT_GE(f.at("min_font_px").get<double>(), 10.0) << id << ": plot text under 10 px";
    EXPECT_TRUE(f.at("clipped").empty()) << id << ": text outside the plot: " << f.at("clipped");
    EXPECT_FALSE(f.at("for").get<std::string>().empty()) << id << ": a plot with no table";
    if (!f.at("follows").is_null()) EXPECT_TRUE(f.at("follows").get<bool>()) << id << ": not after its table";
  }
  if (headline) {
    const auto& order = m.at("order");
    ASSERT_GE(order.size(), 2u);
    EXPECT_EQ(order[0], "h1");
    EXPECT_EQ(order[1], "section#headline.headline") << "the headline is not the first block after the title";
  }
}

}  // namespace ddpbench::testutil
