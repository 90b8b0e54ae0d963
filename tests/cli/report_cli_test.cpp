// `soltune report` end to end: the report of a model-backend run (its times marked as predictions on
// every section), opened offline in a real headless browser (Debian's Chromium, which scripts/setup
// installs): no script error, every chart drew marks on its canvas; and bad input refused. The
// browser's screenshot is kept as tests/cli/report.png in the build folder.
#include <gtest/gtest.h>

#include <regex>

#include "cli_fixture.hpp"

namespace soltune {
namespace {

class ReportCli : public Cli {
 protected:
  void SetUp() override {
    Cli::SetUp();
    share_compile_cache();
  }
  // A model-backend tune of gelu and of matmul's shipped config, reported into tmp_/report.html.
  Result report_of_two_problems() {
    EXPECT_EQ(tune_gelu(16).code, 0);
    const auto m = soltune("tune " + q(kSource / "configs" / "matmul.yaml") + " --backend model --evals 24 --kb " + q(kb_) + " -q");
    EXPECT_EQ(m.code, 0) << m;
    return soltune("report --kb " + q(kb_) + " -o report.html");
  }
};

TEST_F(ReportCli, AModelRunsReportSaysItsTimesArePredictions) {
  const auto r = report_of_two_problems();
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("predicted times marked"), std::string::npos) << r;
  const auto html = read(tmp_ / "report.html");
  EXPECT_NE(html.find("the model backend's predictions"), std::string::npos);
  EXPECT_NE(html.find("(predicted times)"), std::string::npos) << "each section's heading says so";
  EXPECT_LT(html.size(), 5u << 20);
  // One problem only.
  const auto g = soltune("report --kb " + q(kb_) + " --problem gelu -o gelu.html");
  ASSERT_EQ(g.code, 0) << g;
  const auto gelu = read(tmp_ / "gelu.html");
  EXPECT_NE(gelu.find("\"problem\":\"gelu\""), std::string::npos);
  EXPECT_EQ(gelu.find("\"problem\":\"matmul\""), std::string::npos);
}

TEST_F(ReportCli, TuneWritesItsRunsReportAtTheEnd) {
  const auto r = soltune("tune " + q(kSource / "configs" / "gelu.yaml") + " --backend model --evals 8 --kb " + q(kb_) +
                         " -q --report run.html");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("report: 4 task(s) on 1 GPU(s), predicted times marked -> run.html"), std::string::npos) << r;
  EXPECT_NE(read(tmp_ / "run.html").find("\"problem\":\"gelu\""), std::string::npos);
}

TEST_F(ReportCli, InABrowserEveryChartDrawsAndNoScriptFails) {
  std::string browser;
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(p)) browser = p;
  if (browser.empty()) GTEST_SKIP() << "no Chromium on this machine (scripts/setup installs Debian's)";
  ASSERT_EQ(report_of_two_problems().code, 0);
  const std::string open = q(browser) + " --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=" +
                           q(tmp_ / "profile") + " --virtual-time-budget=20000 --window-size=1400,2400 ";
  const std::string page = " file://" + (tmp_ / "report.html").string();
  const auto dom = shell("timeout 120 " + open + "--dump-dom" + page + " >" + q(tmp_ / "stdout.txt") + " 2>" +
                         q(tmp_ / "stderr.txt"));
  ASSERT_EQ(dom.code, 0) << dom;
  EXPECT_EQ(dom.out.find("data-error"), std::string::npos) << "a script failed: " << dom.out.substr(0, 600);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom.out, m, std::regex("data-drawn=\"(\\d+) of (\\d+)\""))) << "the page's script never finished";
  // A roofline and a progress chart per task: more than the tasks alone.
  EXPECT_GT(std::stoi(m[2].str()), 4);
  EXPECT_EQ(m[1].str(), m[2].str()) << "charts without marks";
  const auto shot = fs::path(SOLTUNE_BINARY_DIR) / "tests" / "cli" / "report.png";
  const auto png = shell("timeout 120 " + open + "--screenshot=" + q(shot) + page + " >" + q(tmp_ / "stdout.txt") +
                         " 2>" + q(tmp_ / "stderr.txt"));
  EXPECT_EQ(png.code, 0) << png;
  EXPECT_GT(fs::file_size(shot), 20000u);
}

TEST_F(ReportCli, BadInputIsRefusedWithWhy) {
  const auto missing = soltune("report --kb nowhere.sqlite -o r.html");
  EXPECT_EQ(missing.code, 1) << missing;
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing;
  const auto usage = soltune("report --kb x.sqlite");
  EXPECT_EQ(usage.code, 2) << usage;
  ASSERT_EQ(tune_gelu(8).code, 0);
  const auto none = soltune("report --kb " + q(kb_) + " --problem softmax -o r.html");
  EXPECT_EQ(none.code, 1) << none;
  EXPECT_NE(none.err.find("no result of problem 'softmax'"), std::string::npos) << none;
  EXPECT_FALSE(fs::exists(tmp_ / "r.html"));
}

}  // namespace
}  // namespace soltune
