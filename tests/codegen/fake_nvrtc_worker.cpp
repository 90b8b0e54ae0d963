// A compile helper for the tests: `fake_nvrtc_worker [MODE]`. Without MODE it is the real thing
// (nvrtc_worker_main). With MODE hang | crash | garbage, it reads the whole request first and
// misbehaves so when the request contains "SOLTUNE_FAKE_TRIGGER", else compiles it for real.
// MODE deaf: never reads at all, never answers.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "codegen/nvrtc_worker.hpp"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode.empty()) return soltune::nvrtc_worker_main(0, 1);
  if (mode == "deaf") std::this_thread::sleep_for(std::chrono::hours(1));
  std::string request;
  char buf[65536];
  for (ssize_t n; (n = ::read(0, buf, sizeof buf)) > 0;) request.append(buf, static_cast<size_t>(n));
  if (request.find("SOLTUNE_FAKE_TRIGGER") != std::string::npos) {
    if (mode == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
    if (mode == "crash") std::abort();
    if (mode == "garbage") {
      const std::string junk = "this is not a frame header at all\n";
      (void)!::write(1, junk.data(), junk.size());
      return 0;
    }
  }
  // Replay the request to the real helper from a temp file.
  std::FILE* f = std::tmpfile();
  if (!f || std::fwrite(request.data(), 1, request.size(), f) != request.size()) return 2;
  std::fflush(f);
  std::rewind(f);
  return soltune::nvrtc_worker_main(fileno(f), 1);
}
