#pragma once
// File helpers the tests share: a whole file as bytes, a file written whole, and edits of a copy.
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <sstream>
#include <string>

namespace soltune::test {

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Returns false when the file could not be written.
inline bool write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  return out.good();
}

// text with the first `from` replaced by `to`; throws where text has no `from` (a test's edit that
// silently changed nothing would test nothing).
inline std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("replace_once: '" + from + "' not found");
  return text.replace(at, from.size(), to);
}

// Replaces the first `from` in the file `p` with `to` (throwing, as replace_once does, where there is
// none) and returns the 1-based line where `from` began: where a loader must report the edit.
inline int replace_in_file(const std::filesystem::path& p, const std::string& from, const std::string& to) {
  const auto text = read_file(p);
  if (!write_file(p, replace_once(text, from, to))) throw std::runtime_error("cannot write " + p.string());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(text.find(from)), '\n'));
}

// templates/pnpoly's problem.yaml text with the polygon read from polygon.npy: the vertices' init
// and range ("shape: [2 * nv], init: ..., range: {...}}") give way to `file`. Empty where the text
// does not hold them.
inline std::string pnpoly_vertices_from_file(std::string yaml) {
  const auto at = yaml.find("shape: [2 * nv], init: ");
  const auto end = at == std::string::npos ? at : yaml.find("}}", at);
  if (end == std::string::npos) return {};
  return yaml.replace(at, end + 2 - at, "shape: [2 * nv], file: polygon.npy}");
}

// Removes a copy's `fallback:` line (naming `variant`, or any where empty): a test of one variant's
// path then measures and exports that variant alone, with no fallback-only task beside it.
inline void remove_fallback(const std::filesystem::path& problem_dir, const std::string& variant = "") {
  const auto yaml = problem_dir / "problem.yaml";
  std::istringstream in(read_file(yaml));
  std::string out, line;
  const std::string prefix = "fallback: {variant: " + (variant.empty() ? "" : variant + ",");
  while (std::getline(in, line))
    if (line.rfind(prefix, 0) != 0) out += line + "\n";
  write_file(yaml, out);
}

// Removes variant `name` (its YAML) from a copy of a problem's templates, and the problem's
// `fallback:` line when it names that variant: a copy that replaces its variants with a test's own.
inline void remove_variant(const std::filesystem::path& problem_dir, const std::string& name) {
  std::filesystem::remove(problem_dir / (name + ".yaml"));
  remove_fallback(problem_dir, name);
}

// The toolkit's nvcc: $CUDA_HOME/bin, $CUDA_PATH/bin or /usr/local/cuda/bin; empty where there is none
// (tests that build with it skip).
// A path quoted for sh, and a command's exit status (-1 where it did not exit).
inline std::string q(const std::filesystem::path& p) { return "'" + p.string() + "'"; }
inline int run(const std::string& cmd) {
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

inline std::filesystem::path nvcc_path() {
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(env); v && *v && std::filesystem::exists(std::filesystem::path(v) / "bin" / "nvcc"))
      return std::filesystem::path(v) / "bin" / "nvcc";
  if (std::filesystem::exists("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  return {};
}

// A fresh folder in the temp folder ("soltune-TAG-XXXXXX"), removed with all it holds when the
// object goes: one per test fixture.
// A compile cache the slowest command-line tests share, in the build tree (never the user's): their
// model-backend runs compile the same shipped templates, and on CI's two cores those compiles were
// most of the suite's time. Entries are written by an atomic rename, so concurrent tests are safe;
// tests of the cache itself keep caches of their own.
inline std::filesystem::path shared_compile_cache() { return std::filesystem::path(SOLTUNE_BINARY_DIR) / "tests" / "nvrtc-cache"; }

class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    std::string t = (std::filesystem::temp_directory_path() / ("soltune-" + tag + "-XXXXXX")).string();
    if (mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp " + t + " failed");
    path_ = t;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace soltune::test
