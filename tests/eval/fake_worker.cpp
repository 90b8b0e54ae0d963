// A stand-in for `soltune worker` that speaks the protocol without a GPU and misbehaves on demand:
//   fake_worker MODE N COUNTER_FILE
// MODE: ok | crash | hang | garbage | silent-exit. The N-th `run` request over all processes (counted
// in COUNTER_FILE, since the tuner restarts workers) crashes, hangs, answers garbage, or the worker
// exits at once at start-up when MODE is `start-crash`.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "core/device.hpp"
#include "eval/wire.hpp"

using namespace soltune;

namespace {
int bump(const std::string& file) {
  int n = 0;
  std::ifstream(file) >> n;
  std::ofstream(file) << ++n;
  return n;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  const std::string mode = argv[1], counter = argv[3];
  const int nth = std::atoi(argv[2]);
  if (mode == "start-crash") return 7;
  std::string payload;
  while (wire::read_frame(0, payload)) {
    const auto m = wire::parse(payload);
    const auto op = m["op"].as<std::string>();
    YAML::Node r;
    r["ok"] = true;
    if (op == "hello") {
      wire::decode_eval_options(m["options"]);  // throws (the worker then dies unanswered) if any field is missing
      auto d = *find_known_gpu("H200");
      d.uuid = "GPU-fake";
      r["device"] = wire::encode(d);
      r["arch"] = "sm_90";
    } else if (op == "baseline") {
      TaskBaseline b;
      b.t_ref_us = 100;
      b.t_sol_us = 10;
      b.note = "fake";
      r["baseline"] = wire::encode(b);
    } else if (op == "retime") {
      // One CUBIN frame per item; answers fixed medians: the baseline 100 us, item i 10 + i us.
      std::vector<double> base;
      for (int r = 0; r < m["rounds"].as<int>(); ++r) base.push_back(100);
      r["baseline"] = base;
      int i = 0;
      for (const auto& item : m["items"]) {
        std::string cubin;
        if (!wire::read_frame(0, cubin) || cubin.compare(1, 3, "ELF") != 0) return 9;
        (void)item;
        r["configs"].push_back(std::vector<double>(base.size(), 10.0 + i++));
        r["failed"].push_back(std::string());
      }
    } else if (op == "run") {
      std::string cubin;
      if (!wire::read_frame(0, cubin)) return 1;
      if (cubin.size() < 4 || cubin.compare(1, 3, "ELF") != 0) return 9;  // the CUBIN must arrive intact
      if (bump(counter) == nth) {
        if (mode == "crash") std::abort();
        if (mode == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
        if (mode == "garbage") {
          const std::string junk = "this is not a frame header at all\n";
          (void)!write(1, junk.data(), junk.size());
          std::this_thread::sleep_for(std::chrono::hours(1));
        }
      }
      EvalResult e;
      e.status = Status::ok;
      e.time = summarize({50, 51, 52});
      e.acc.pass = true;
      e.log = "fake run of " + m["key"].as<std::string>();
      r["outcome"] = wire::encode_outcome(e);
      r["lost"] = false;
    }
    if (!wire::write_frame(1, wire::emit(r))) return 1;
  }
  return 0;
}
