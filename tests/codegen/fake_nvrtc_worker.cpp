// A compile helper for the tests: `fake_nvrtc_worker [MODE]`. Without MODE it is the real thing
// (nvrtc_worker_main). With MODE hang | crash | garbage, it serves requests like the real one but
// misbehaves so on a request that contains "SOLTUNE_FAKE_TRIGGER".
// MODE deaf: never reads at all, never answers.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "codegen/nvrtc_worker.hpp"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode.empty()) return soltune::nvrtc_worker_main(0, 1);
  if (mode == "deaf") std::this_thread::sleep_for(std::chrono::hours(1));
  soltune::use_worker_tmpdir();
  for (;;) {
    soltune::CompileRequest r;
    std::vector<std::string> options;
    if (!soltune::read_compile_request(0, r, options)) return 0;
    if (r.source.find("SOLTUNE_FAKE_TRIGGER") != std::string::npos) {
      if (mode == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
      if (mode == "crash") std::abort();
      if (mode == "garbage") {
        const std::string junk = "this is not a frame header at all\n";
        (void)!::write(1, junk.data(), junk.size());
        return 0;
      }
    }
    if (!soltune::answer_compile_request(1, r, options)) return 1;
  }
}
