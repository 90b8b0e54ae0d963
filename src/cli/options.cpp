#include "cli/options.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sstream>

#include "eval/gpu_lock.hpp"

namespace po = boost::program_options;

namespace soltune::cli {

po::variables_map parse_options(const po::options_description& desc, const std::vector<std::string>& args,
                                std::vector<std::string>& positional, const std::string& command) {
  po::options_description all;
  all.add(desc);
  all.add_options()("positional", po::value(&positional));
  po::positional_options_description pos;
  pos.add("positional", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(command + ": " + e.what() + "\n" + to_string(desc));
  }
  return vm;
}

std::optional<ParsedArgs> parse_command(const po::options_description& desc, const std::vector<std::string>& args,
                                        const std::string& command, const std::string& synopsis) {
  ParsedArgs p;
  p.vm = parse_options(desc, args, p.positional, command);
  if (p.vm.count("help")) {
    std::printf("usage: soltune %s %s\n%s", command.c_str(), synopsis.c_str(), to_string(desc).c_str());
    return std::nullopt;
  }
  return p;
}

WorkerOptions worker_options(int device, const DeviceInfo& d, bool wait_for_gpu) {
  WorkerOptions o;
  o.command = {"/proc/self/exe", "worker"};
  o.device = device;
  o.lock_key = d.uuid;
  o.lock_label = gpu_label(device, d);
  o.wait_for_gpu = wait_for_gpu;
  return o;
}

std::filesystem::path default_templates() {
  if (const char* env = std::getenv("SOLTUNE_TEMPLATES")) return env;
  if (std::filesystem::exists("templates")) return "templates";
  return SOLTUNE_TEMPLATES_DIR;
}

CompilerOptions compiler_options() {
  CompilerOptions o = default_compiler_options();
  o.timeout_s = 60;
  if (const char* v = std::getenv("SOLTUNE_COMPILE_TIMEOUT"); v && *v) {
    char* end = nullptr;
    o.timeout_s = std::strtod(v, &end);
    if (*end != '\0' || !std::isfinite(o.timeout_s) || o.timeout_s < 0)
      throw UsageError(std::string("SOLTUNE_COMPILE_TIMEOUT: expected seconds (0 = no limit), got '") + v + "'");
  }
  o.isolate_command = {"/proc/self/exe", "nvrtc-worker"};
  return o;
}

std::string shell_quote(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789_./=:,+-@%") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string to_string(const po::options_description& desc) {
  std::ostringstream s;
  s << desc;
  return s.str();
}

std::string utc_now() {
  char b[32];
  const auto t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

}  // namespace soltune::cli
