#pragma once
// What the exported-header tests share: a host program around an exported header, built with nvcc
// and run without a GPU (dispatch, plans and can_implement are host code).
#include <cstdlib>
#include <filesystem>
#include <string>

#include "../support/files.hpp"

namespace soltune::test {

// main.cu of a program that includes <problem>.cuh and uses its namespace, then runs `body`, which
// may use an H100's limits (sms, cc, optin, l2) and `expect(got, want, what)`, counting each miss in
// `bad`; it prints ok or FAILED and returns bad.
inline std::string host_program(const std::string& problem, const std::string& body) {
  return "#include \"" + problem + ".cuh\"\n#include <cstdio>\nusing namespace soltune_" + problem +
         ";\n"
         "int main() {\n"
         "  [[maybe_unused]] const double sms = 132, cc = 90, optin = 232448, l2 = 62914560;\n"
         "  int bad = 0;\n"
         "  [[maybe_unused]] auto expect = [&](long long got, long long want, const char* what) {\n"
         "    if (got != want) { std::printf(\"%s: %lld, want %lld\\n\", what, got, want); ++bad; }\n"
         "  };\n" +
         body +
         "  std::printf(bad ? \"FAILED\\n\" : \"ok\\n\");\n"
         "  return bad;\n"
         "}\n";
}

// Writes `header` as dir/<problem>.cuh and host_program(problem, body) as dir/main.cu.
inline void write_host_program(const std::filesystem::path& dir, const std::string& problem, const std::string& header,
                               const std::string& body) {
  write_file(dir / (problem + ".cuh"), header);
  write_file(dir / "main.cu", host_program(problem, body));
}

// Builds dir/main.cu (which includes the exported header) with nvcc for sm_90 (the tensor-map
// kernels need 9.0) and runs it: "" when both succeed, else which step failed and what it printed.
inline std::string build_and_run(const std::string& nv, const std::filesystem::path& dir, const std::string& flags = "") {
  const auto cmd = nv + " -std=c++17 -arch=sm_90" + flags + " -o " + (dir / "main").string() + " " +
                   (dir / "main.cu").string() + " > " + (dir / "log").string() + " 2>&1";
  if (std::system(cmd.c_str()) != 0) return "nvcc failed:\n" + read_file(dir / "log");
  if (std::system(((dir / "main").string() + " > " + (dir / "run").string() + " 2>&1").c_str()) != 0)
    return "the program failed:\n" + read_file(dir / "run");
  return "";
}

}  // namespace soltune::test
