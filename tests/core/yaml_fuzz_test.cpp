// Mutation fuzzing of the shipped configs and templates: every mutated file either loads or is
// refused with a soltune::Error that names the file (and, for what YAML itself rejects, the line and
// column). Any other exception is what `soltune` reports as an internal error (exit 3), with no file
// named. Seeded, so a failure names the case that reproduces it; SOLTUNE_FUZZ_CASES sets how many
// cases each file gets (CI runs the default, a few hundred in all).
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "../support/files.hpp"
#include "core/problem.hpp"
#include "core/rng.hpp"
#include "core/run_config.hpp"

namespace soltune {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < text.size()) {
    const auto nl = text.find('\n', at);
    lines.push_back(text.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return lines;
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// Values that stress each reader: other node kinds, empty and null, signs, ranges, bases, floats
// that are not finite, YAML tags and anchors.
const std::vector<std::string> kValues = {
    "[1, 2]", "{a: 1}", "~", "\"\"", "-1", "0", "4294967297", "-9223372036854775809", "010", "0x1F", "0o17",
    "1e400", ".nan", ".inf", "-.inf", "'x'", "&anchor 3", "*nowhere", "!!binary aGVsbG8=", "[[[]]]", "{}", "[]",
    "yes", "3.5", "\"a: b\"", "|\n  block", "? x"};
const std::vector<std::string> kKeys = {"[k, x]", "{k: 1}", "? [k]\n", "\"\"", "~", "k k", "*nowhere", "&a k"};

// One mutation of a YAML text: a value, a key, a line (removed, repeated, moved, indented), a
// document marker, a cut, or a stray byte.
std::string mutate(const std::string& text, Rng& rng) {
  auto lines = split_lines(text);
  if (lines.empty()) return "x: [";
  const size_t i = rng.below(lines.size());
  auto& line = lines[i];
  const auto colon = line.find(": ");
  switch (rng.below(10)) {
    case 0:  // a value becomes another kind of value
      if (colon != std::string::npos) line = line.substr(0, colon + 2) + kValues[rng.below(kValues.size())];
      else line += " " + kValues[rng.below(kValues.size())];
      break;
    case 1: {  // a key becomes a list, a mapping, an alias...
      const auto start = line.find_first_not_of(" -");
      if (colon != std::string::npos && start != std::string::npos && start < colon)
        line = line.substr(0, start) + kKeys[rng.below(kKeys.size())] + line.substr(colon);
      else
        line = kKeys[rng.below(kKeys.size())] + ": 1";
      break;
    }
    case 2:
      lines.erase(lines.begin() + static_cast<long>(i));
      break;
    case 3:
      lines.insert(lines.begin() + static_cast<long>(i), line);
      break;
    case 4:
      std::swap(line, lines[rng.below(lines.size())]);
      break;
    case 5:
      line = rng.chance(0.5) ? "  " + line : line.substr(std::min<size_t>(2, line.size()));
      break;
    case 6:
      lines.insert(lines.begin() + static_cast<long>(i), rng.chance(0.5) ? "---" : "...");
      break;
    case 7:
      return text.substr(0, rng.below(text.size()));
    case 8: {  // a stray byte: a tab, a bracket, a quote, a NUL or a byte that is not UTF-8
      static const std::string bytes = std::string("\t[]{}'\"&*!|>%@`#,:") + '\0' + "\xff\xc3";
      line.insert(rng.below(line.size() + 1), 1, bytes[rng.below(bytes.size())]);
      break;
    }
    default: {  // a number inside a line changes
      static const std::regex number("[0-9]+");
      std::smatch m;
      if (std::regex_search(line, m, number))
        line = m.prefix().str() + kValues[rng.below(kValues.size())] + m.suffix().str();
      else
        line += ": " + kValues[rng.below(kValues.size())];
    }
  }
  return join(lines);
}

int cases_per_file() {
  const char* v = std::getenv("SOLTUNE_FUZZ_CASES");
  return v && *v ? std::max(1, std::atoi(v)) : 24;
}

class YamlFuzz : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::copy(SOLTUNE_SOURCE_DIR "/templates", root_ / "templates", fs::copy_options::recursive);
    fs::copy(SOLTUNE_SOURCE_DIR "/configs", root_ / "configs", fs::copy_options::recursive);
  }

  // Loads with `load` after writing a mutation of `file`; restores the file after. `what`: the case.
  template <typename Load>
  void check(const fs::path& file, Load&& load, uint64_t seed) {
    const std::string original = test::read_file(file);
    Rng rng(seed);
    std::string text = mutate(original, rng);
    if (rng.chance(0.3)) text = mutate(text, rng);  // sometimes two at once
    ASSERT_TRUE(test::write_file(file, text));
    const std::string what = "case " + file.filename().string() + " seed " + std::to_string(seed) +
                             "; the mutated file:\n" + text;
    try {
      load();
    } catch (const Error& e) {
      const std::string msg = e.what();
      // Refused: the message names a file of the input (the mutated one, or the config that led there).
      EXPECT_TRUE(msg.rfind(file.string() + ":", 0) == 0 || msg.find(root_.string()) != std::string::npos)
          << msg << "\n" << what;
      if (msg.find("malformed YAML") != std::string::npos || msg.find("expected a key") != std::string::npos ||
          msg.find("duplicate key") != std::string::npos) {
        EXPECT_TRUE(std::regex_search(msg, std::regex("\\.yaml:[0-9]+:[0-9]+: "))) << msg << "\n" << what;
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a soltune::Error (the command line reports it as an internal error): "
                    << typeid(e).name() << ": " << e.what() << "\n" << what;
    }
    ASSERT_TRUE(test::write_file(file, original));
  }

  test::TempDir dir_{"fuzz"};
  const fs::path& root_ = dir_.path();
};

TEST_F(YamlFuzz, MutatedConfigsLoadOrNameTheFile) {
  std::vector<fs::path> configs;
  for (const auto& e : fs::directory_iterator(root_ / "configs"))
    if (e.path().extension() == ".yaml") configs.push_back(e.path());
  std::sort(configs.begin(), configs.end());
  ASSERT_GE(configs.size(), 8u);
  uint64_t seed = 1;
  for (const auto& cfg : configs)
    for (int i = 0; i < cases_per_file(); ++i) check(cfg, [&] { load_run_config(cfg); }, seed++);
}

TEST_F(YamlFuzz, MutatedTemplatesLoadOrNameTheFile) {
  std::vector<std::pair<std::string, fs::path>> files;  // problem, its YAML file
  for (const auto& dir : fs::directory_iterator(root_ / "templates")) {
    if (!fs::exists(dir.path() / "problem.yaml")) continue;
    for (const auto& e : fs::directory_iterator(dir.path()))
      if (e.path().extension() == ".yaml") files.emplace_back(dir.path().filename().string(), e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 12u);
  uint64_t seed = 1000;
  for (const auto& [problem, file] : files)
    for (int i = 0; i < std::max(1, cases_per_file() / 2); ++i)
      check(file, [&, p = problem] { load_problem(root_ / "templates", p); }, seed++);
}

}  // namespace
}  // namespace soltune
