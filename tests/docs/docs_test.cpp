// Every command and config the docs show works (README.md and docs/*.md). A command is a line of a
// fenced block, or an inline code span, that starts with soltune (or build/src/cli/soltune), scripts/,
// bench/, python3 or bash. For each:
// - a soltune command names a real command, and every option it shows is one that command takes;
// - one without placeholders (CONFIG, FILE..., [optional], a|b, <x>, $VAR, ...) is run as written, in
//   a scratch copy of the repository's configs, templates and recordings, in the order the page shows
//   them, without a GPU (the model backend), and must succeed;
// - a script or file it names exists (a shell script also parses), and the scripts README.md and the
//   guides send users to need nothing outside the repository;
// - every config a page names loads, and every YAML block that is a config loads.
// docs/BENCHMARKS.md records how figures were measured on a GPU: its commands are checked, not run.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../support/files.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;
const fs::path kSource = SOLTUNE_SOURCE_DIR;
const fs::path kSoltune = SOLTUNE_BIN;

struct Shown {
  std::string page;  // README.md, docs/X.md
  int line = 0;
  std::string text;
  std::string where() const { return page + ":" + std::to_string(line); }
};

struct Page {
  std::vector<Shown> commands, yaml_blocks, paths;
};

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  s = s.substr(b);
  return s.substr(0, s.find_last_not_of(" \t") + 1);
}

bool is_command(const std::string& t) {
  static const std::regex start("^([A-Z_]+=\\S+ )*(soltune|build/src/cli/soltune|scripts/|bench/|python3 |bash )");
  return std::regex_search(t, start);
}

// The commands, YAML blocks and repository paths of one page, with their lines.
Page read_page(const fs::path& file, const std::string& name) {
  Page p;
  std::istringstream in(test::read_file(file));
  std::string line, prose, block;
  int n = 0, prose_start = 0, block_start = 0;
  bool in_block = false;
  std::string lang;
  const auto scan_prose = [&] {
    // Inline spans may run over a line break; the span's first line is where it is shown.
    static const std::regex span("`([^`]+)`");
    for (auto it = std::sregex_iterator(prose.begin(), prose.end(), span); it != std::sregex_iterator(); ++it) {
      std::string t = (*it)[1].str();
      const int at = prose_start + static_cast<int>(std::count(prose.begin(), prose.begin() + it->position(), '\n'));
      std::replace(t.begin(), t.end(), '\n', ' ');
      t = trim(t);
      if (is_command(t)) p.commands.push_back({name, at, t});
      static const std::regex path("^(configs|scripts|bench|tests/data|templates)/[A-Za-z0-9_./-]+$");
      if (std::regex_match(t, path)) p.paths.push_back({name, at, t});
    }
    prose.clear();
  };
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind("```", 0) == 0) {
      if (!in_block) {
        scan_prose();
        in_block = true;
        lang = line.substr(3);
        block.clear();
        block_start = n + 1;
      } else {
        in_block = false;
        if (lang == "yaml") p.yaml_blocks.push_back({name, block_start, block});
      }
      continue;
    }
    if (in_block) {
      block += line + "\n";
      // "scripts/setup && X  # what it does": the command is X; the comment is prose.
      std::string t = line;
      if (const auto c = t.find("  #"); c != std::string::npos) t = t.substr(0, c);
      t = trim(t);
      if (t.rfind("scripts/setup && ", 0) == 0) {
        p.commands.push_back({name, n, "scripts/setup"});
        t = t.substr(17);
      }
      if (const auto c = t.find("   ("); c != std::string::npos) t = trim(t.substr(0, c));  // "cmd   (a note)"
      if (is_command(t)) p.commands.push_back({name, n, t});
      continue;
    }
    if (prose.empty()) prose_start = n;
    prose += line + "\n";
    if (trim(line).empty()) scan_prose();
  }
  scan_prose();
  return p;
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// A word that stands for something the reader fills in.
bool placeholder(const std::string& w) {
  static const std::regex caps("^\\[?[A-Z][A-Z0-9_]*(\\.\\.\\.)?\\]?$");
  static const std::regex glob("^[A-Za-z0-9_./-]*\\*[A-Za-z0-9_./*-]*$");  // a path's glob: the shell fills it in
  if (w.find('/') != std::string::npos && std::regex_match(w, glob)) return false;
  return std::regex_match(w, caps) || w.find_first_of("[]|<>${}*") != std::string::npos ||
         w.find("...") != std::string::npos;
}

struct Run {
  int code = -1;
  std::string out;
};

constexpr double kLongestShownSeconds = 60;

Run sh(const std::string& cmd, const fs::path& dir, int timeout_s = 300) {
  const fs::path log = dir / ".docs-test-log";
  const std::string full = "cd '" + dir.string() + "' && timeout " + std::to_string(timeout_s) + " sh -c '" +
                           std::regex_replace(cmd, std::regex("'"), "'\\''") + "' > '" + log.string() + "' 2>&1 < /dev/null";
  const int st = std::system(full.c_str());
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, test::read_file(log)};
}

class Docs : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* dir : {"configs", "templates", "tests/data", "scripts"}) {
      fs::create_directories(scratch_ / dir);
      fs::copy(kSource / dir, scratch_ / dir, fs::copy_options::recursive);
    }
    // The program as the docs call it: on PATH, and where the README's build puts it.
    fs::create_directories(scratch_ / "build" / "src" / "cli");
    fs::create_directories(scratch_ / "bin");
    fs::create_symlink(kSoltune, scratch_ / "build" / "src" / "cli" / "soltune");
    fs::create_symlink(kSoltune, scratch_ / "bin" / "soltune");
    setenv("PATH", ((scratch_ / "bin").string() + ":" + std::getenv("PATH")).c_str(), 1);
    setenv("SOLTUNE_CACHE_DIR", test::shared_compile_cache().c_str(), 1);
    setenv("CUDA_VISIBLE_DEVICES", "", 1);  // the model backend, also on a machine with a GPU
  }
  // `soltune SUB --help` (SUB may be "kb list"): its text, or "" when there is no such command.
  std::string help(const std::string& sub) {
    if (auto it = helps_.find(sub); it != helps_.end()) return it->second;
    const auto r = sh("soltune " + sub + " --help", scratch_, 30);
    return helps_[sub] = r.code == 0 ? r.out : "";
  }

  // Checks a soltune command; true when it was run (it has no placeholders and `run` is set).
  bool check_soltune(const Shown& c, bool run) {
    auto w = words(c.text);
    size_t i = 0;
    while (i < w.size() && w[i].find('=') != std::string::npos && w[i][0] != '-') ++i;  // VAR=value
    ++i;  // the program
    if (i >= w.size()) return false;  // "soltune" alone: the program's name
    std::string sub = w[i];
    if (sub == "worker" || sub == "nvrtc-worker") {
      // Internal programs (the GPU worker, the compile helper): started by soltune itself, they end
      // at once on an empty input.
      EXPECT_NE(sh("soltune " + sub, scratch_, 20).code, 124) << c.where() << ": " << c.text;
      return false;
    }
    if (sub[0] != '-') {
      ++i;
      if (sub == "kb" && i < w.size() && !placeholder(w[i]) && w[i][0] != '-') sub += " " + w[i++];
    } else {
      sub = "";
    }
    const std::string text = help(sub);
    if (text.empty()) {
      ADD_FAILURE() << c.where() << ": `soltune " << sub << "` is no command: " << c.text;
      return false;
    }
    bool has_placeholder = false;
    for (size_t k = i; k < w.size(); ++k) {
      has_placeholder = has_placeholder || placeholder(w[k]);
      std::smatch m;
      static const std::regex option("^\\[?(--[a-z][a-z0-9-]*|-[a-z])\\b");
      if (std::regex_search(w[k], m, option) && m[1] != "--help" && m[1] != "-h") {
        EXPECT_NE(text.find(m[1].str() == "-o" ? "-o [ --output ]" : m[1].str()), std::string::npos)
            << c.where() << ": `soltune " << sub << "` has no option " << m[1] << ": " << c.text;
      }
    }
    if (!run || has_placeholder || i >= w.size()) return false;  // a synopsis, or a command's name
    // What is run must end well within sh's limit: a long tune a page reports is named in prose.
    for (size_t k = i; k + 1 < w.size(); ++k)
      if (w[k] == "--seconds" && std::atof(w[k + 1].c_str()) > kLongestShownSeconds) {
        ADD_FAILURE() << c.where() << ": `" << c.text << "` would run for " << w[k + 1] << " s (the docs check runs what "
                      << "a page shows, at most " << kLongestShownSeconds << " s of tuning): name a long tune in prose";
        return false;
      }
    const auto r = sh(c.text, scratch_);
    EXPECT_EQ(r.code, 0) << c.where() << ": `" << c.text << "` failed (exit " << r.code << "):\n" << r.out;
    std::printf("ran %s: %s\n", c.where().c_str(), c.text.c_str());
    return true;
  }

  void check_file_command(const Shown& c, bool guide) {
    for (const auto& w : words(c.text)) {
      if (!std::regex_match(w, std::regex("^(scripts|bench)/[A-Za-z0-9_./-]+$"))) continue;
      const auto file = kSource / w;
      // bench/X may name the program built from bench/X.cpp or bench/X.cu.
      bool source = false;
      for (const char* ext : {".cpp", ".cu"}) source = source || fs::exists(file.string() + ext);
      ASSERT_TRUE(fs::exists(file) || source) << c.where() << ": " << w << " does not exist";
      if (file.extension() == ".sh" || w == "scripts/setup") {
        EXPECT_EQ(sh("bash -n '" + file.string() + "'", scratch_).code, 0) << c.where() << ": " << w << " does not parse";
        if (guide) {
          // What users are sent to must run from a clone: nothing from outside the repository.
          const auto body = test::read_file(file);
          for (const char* outside : {"../shared", ".gpu/"})
            EXPECT_EQ(body.find(outside), std::string::npos)
                << c.where() << ": " << w << " needs " << outside << ", which a clone does not have";
        }
      }
    }
  }

  test::TempDir dir_{"docs"};
  const fs::path& scratch_ = dir_.path();
  std::map<std::string, std::string> helps_;
};

std::vector<std::pair<std::string, fs::path>> pages() {
  std::vector<std::pair<std::string, fs::path>> out{{"README.md", kSource / "README.md"}};
  std::vector<fs::path> docs;
  for (const auto& e : fs::directory_iterator(kSource / "docs"))
    if (e.path().extension() == ".md") docs.push_back(e.path());
  std::sort(docs.begin(), docs.end());
  for (const auto& d : docs) out.emplace_back("docs/" + d.filename().string(), d);
  return out;
}

TEST_F(Docs, EveryCommandShownWorks) {
  // A knowledge base for the pages' examples that read one (A.sqlite), made as a user would.
  ASSERT_EQ(sh("soltune tune configs/gelu.yaml --backend model --evals 8 --kb A.sqlite", scratch_).code, 0);
  size_t run = 0, checked = 0;
  for (const auto& [name, file] : pages()) {
    const bool guide = name != "docs/BENCHMARKS.md";
    for (const auto& c : read_page(file, name).commands) {
      ++checked;
      const bool soltune = std::regex_search(c.text, std::regex("^([A-Z_]+=\\S+ )*(build/src/cli/)?soltune\\b"));
      if (soltune) {
        run += check_soltune(c, guide);
      } else {
        check_file_command(c, guide);
        // A guide's worked example (`bash scripts/X ARGS`) runs whole, as a user would run it.
        const auto w = words(c.text);
        if (guide && c.text.rfind("bash scripts/", 0) == 0 &&
            std::none_of(w.begin(), w.end(), [](const std::string& x) { return placeholder(x); })) {
          const auto r = sh(c.text, scratch_, 600);
          EXPECT_EQ(r.code, 0) << c.where() << ": `" << c.text << "` failed (exit " << r.code << "):\n" << r.out;
          std::printf("ran %s: %s\n", c.where().c_str(), c.text.c_str());
          run += r.code == 0;
        }
      }
    }
  }
  EXPECT_GT(checked, 20u);
  EXPECT_GE(run, 3u);  // the README's tune, and the knowledge base's export and import at least
}

TEST_F(Docs, EveryConfigShownLoads) {
  std::set<std::string> named;
  for (const auto& [name, file] : pages()) {
    const auto page = read_page(file, name);
    for (const auto& p : page.paths) {
      if (p.text.rfind("configs/", 0) != 0 || p.text.find(".yaml") == std::string::npos) continue;
      EXPECT_TRUE(fs::exists(kSource / p.text)) << p.where() << ": " << p.text << " does not exist";
      named.insert(p.text);
    }
    for (const auto& c : page.commands)
      for (const auto& w : words(c.text))
        if (std::regex_match(w, std::regex("^configs/[A-Za-z0-9_/-]+\\.yaml$"))) named.insert(w);
    // A YAML block with a problem is a config: it loads as one (beside the shipped configs).
    int k = 0;
    for (const auto& b : page.yaml_blocks) {
      if (b.text.find("problem:") == std::string::npos) continue;
      const auto cfg = scratch_ / "configs" / ("shown-" + std::to_string(k++) + ".yaml");
      test::write_file(cfg, b.text);
      const auto r = sh("soltune tune '" + cfg.string() + "' --check", scratch_);
      EXPECT_EQ(r.code, 0) << b.where() << ": the config shown does not load:\n" << r.out;
      // "key: value   # a | b | c": every value the comment offers loads too.
      static const std::regex offer("^(\\s*[a-z_]+: )\\S+(\\s+#\\s*)([a-z0-9_-]+( \\| [a-z0-9_-]+)+)\\b.*$");
      const auto lines = [&] {
        std::vector<std::string> v;
        std::istringstream in(b.text);
        for (std::string l; std::getline(in, l);) v.push_back(l);
        return v;
      }();
      for (size_t i = 0; i < lines.size(); ++i) {
        std::smatch m;
        if (!std::regex_match(lines[i], m, offer)) continue;
        std::istringstream alts(std::regex_replace(m[3].str(), std::regex(" \\| "), " "));
        for (std::string alt; alts >> alt;) {
          auto edited = lines;
          edited[i] = m[1].str() + alt;
          std::string text;
          for (const auto& l : edited) text += l + "\n";
          test::write_file(cfg, text);
          const auto offered = sh("soltune tune '" + cfg.string() + "' --check", scratch_);
          EXPECT_EQ(offered.code, 0) << b.page << ":" << b.line + static_cast<int>(i) << ": the config offers " << m[1].str() << alt
                                     << ", which does not load:\n" << offered.out;
        }
      }
    }
  }
  for (const auto& e : fs::directory_iterator(kSource / "configs"))
    if (e.path().extension() == ".yaml") named.insert("configs/" + e.path().filename().string());
  EXPECT_GE(named.size(), 10u);
  for (const auto& n : named) {
    const auto r = sh("soltune tune '" + n + "' --check", scratch_);
    EXPECT_EQ(r.code, 0) << n << " does not load:\n" << r.out;
  }
}

}  // namespace
}  // namespace soltune
