// The progress line of `ddpbench run` (core/launch/progress) with a scripted clock and a stringstream.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "core/launch/progress.hpp"

namespace ddpbench {
namespace {

const std::string kClr = "\r\x1b[2K";

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(Progress, EtaFormat) {
  EXPECT_EQ(format_eta(0), "0:00");
  EXPECT_EQ(format_eta(0.2), "0:01");  // rounded up
  EXPECT_EQ(format_eta(83), "1:23");
  EXPECT_EQ(format_eta(3599), "59:59");
  EXPECT_EQ(format_eta(3600 * 2 + 5 * 60 + 7), "2:05:07");
  EXPECT_EQ(format_eta(-1), "?");
}

TEST(Progress, ModeFollowsQuietAndTerminal) {
  EXPECT_EQ(progress_mode(true, true), ProgressMode::kQuiet);
  EXPECT_EQ(progress_mode(true, false), ProgressMode::kQuiet);
  EXPECT_EQ(progress_mode(false, true), ProgressMode::kTerminal);
  EXPECT_EQ(progress_mode(false, false), ProgressMode::kLines);
}

TEST(Progress, TerminalLineIsRedrawnWithEtaAndClearedForTableLines) {
  double t = 0;
  std::ostringstream out;
  Progress p(out, ProgressMode::kTerminal, 2, [&] { return t; });
  p.row_started(1, 2, "DDP group resnet18/ddp2", 4);  // t = 0: nothing known yet
  t = 1;
  p.iteration(0, 4);  // measurement starts at t = 1
  t = 2;
  p.iteration(1, 4);  // 1 s/iter: 3 s left in this row; this row ~ 2 + 3 = 5 s, one more row: 8 s
  t = 2.1;
  p.iteration(2, 4);  // 0.1 s after the last draw: not drawn
  t = 3;
  p.iteration(3, 4);  // (3-1)/3 s/iter: 0.667 s left; row ~ 3.667 s; ETA 4.33 -> 0:05
  t = 3.5;
  p.iteration(4, 4);  // 0 s left, row 3.5 s: ETA 3.5 -> 0:04
  t = 4;
  p.row_finished();  // clears; mean row 4 s
  t = 5;
  p.row_started(2, 2, "the no-DDP baseline of resnet18 at batch 2", 4);  // 4 s - 0 elapsed, last row
  t = 6;
  p.suspend();
  p.suspend();  // nothing drawn: nothing to clear
  p.resume();   // 1 s into a 4 s row
  const std::string l1 = "row 1/2 · DDP group resnet18/ddp2";
  const std::string l2 = "row 2/2 · no-DDP baseline of resnet18 at batch 2";
  EXPECT_EQ(out.str(), kClr + l1 + " · warm-up · ETA ?" +          //
                           kClr + l1 + " · iter 0/4 · ETA ?" +     //
                           kClr + l1 + " · iter 1/4 · ETA 0:08" +  //
                           kClr + l1 + " · iter 3/4 · ETA 0:05" +  //
                           kClr + l1 + " · iter 4/4 · ETA 0:04" +  //
                           kClr +                                  //
                           kClr + l2 + " · warm-up · ETA 0:04" +   //
                           kClr +                                  //
                           kClr + l2 + " · warm-up · ETA 0:03");
}

TEST(Progress, TerminalRedrawsAtMostFourTimesASecond) {
  int ms = 0;
  std::ostringstream out;
  Progress p(out, ProgressMode::kTerminal, 1, [&] { return ms / 1000.0; });
  p.row_started(1, 1, "x", 1000);
  for (int k = 0; k <= 100; ++k) {
    ms = 10 * k;  // an iteration every 10 ms for 1 s
    p.iteration(k, 1000);
  }
  // Drawn at 0 (start; the k = 0 tick at 0 ms is too early), 250, 500, 750 and 1000 ms.
  EXPECT_EQ(count(out.str(), kClr), 5u);
  EXPECT_NE(out.str().find("iter 100/1000"), std::string::npos);
  EXPECT_EQ(out.str().find("iter 99/1000"), std::string::npos);
}

TEST(Progress, DurationRowShowsSecondsMeasured) {
  double t = 0;
  std::ostringstream out;
  Progress p(out, ProgressMode::kTerminal, 1, [&] { return t; });
  p.row_started(1, 1, "DDP group resnet18/ddp2", 0, 6.0);
  t = 1;
  p.iteration(0, 0);
  t = 3;
  p.iteration(10, 0);
  // 2 of 6 s measured: 4 s left, the only row.
  EXPECT_EQ(p.status_line(), "row 1/1 · DDP group resnet18/ddp2 · iter 10 · 2/6 s · ETA 0:04");
}

TEST(Progress, AutoIterationsAreUnknownUntilARowFinished) {
  double t = 0;
  std::ostringstream out;
  Progress p(out, ProgressMode::kTerminal, 3, [&] { return t; });
  p.next_row("a", 0);
  t = 1;
  p.iteration(0, 0);
  t = 2;
  p.iteration(5, 0);
  EXPECT_EQ(p.status_line(), "row 1/3 · a · iter 5 · ETA ?");
  t = 10;
  p.row_finished();  // 10 s per row
  t = 12;
  p.next_row("b", 0);  // 10 - 0 s left here + one more row of 10 s
  EXPECT_EQ(p.rows_started(), 2);
  EXPECT_EQ(p.status_line(), "row 2/3 · b · warm-up · ETA 0:20");
  t = 25;  // longer than the mean already: 0 left here, 10 s for row 3
  EXPECT_EQ(p.status_line(), "row 2/3 · b · warm-up · ETA 0:10");
}

TEST(Progress, NotATerminalPrintsOneLinePerRowAtItsStart) {
  double t = 0;
  std::ostringstream out;
  Progress p(out, ProgressMode::kLines, 3, [&] { return t; });
  p.next_row("the no-DDP baseline of resnet18 at batch 2", 20);
  for (int k = 0; k <= 20; ++k) {
    t += 0.5;
    p.iteration(k, 20);
  }
  p.suspend();
  p.resume();
  p.row_finished();
  p.next_row("DDP group resnet18/ddp2", 0);
  p.row_finished();
  p.next_row("DDP group resnet18/ddp4", 0, 6);
  p.iteration(3, 0);
  p.row_finished();
  EXPECT_EQ(out.str(),
            "[1/3] no-DDP baseline of resnet18 at batch 2 (20 iterations) ...\n"
            "[2/3] DDP group resnet18/ddp2 (iterations: auto) ...\n"
            "[3/3] DDP group resnet18/ddp4 (burn-in 6 s) ...\n");
}

TEST(Progress, QuietPrintsNothing) {
  double t = 0;
  std::ostringstream out;
  {
    Progress p(out, ProgressMode::kQuiet, 2, [&] { return t; });
    p.next_row("a", 4);
    for (int k = 0; k <= 4; ++k) {
      t += 1;
      p.iteration(k, 4);
    }
    p.suspend();
    p.resume();
    p.row_finished();
    p.next_row("b", 4);
  }
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace ddpbench
