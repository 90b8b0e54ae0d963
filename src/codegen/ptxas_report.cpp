#include "codegen/ptxas_report.hpp"

#include <charconv>
#include <limits>
#include <sstream>
#include <string_view>

namespace soltune {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The text after "ptxas info    :" / "ptxas         ." (the prefix of a continuation line), or the
// whole line when it has no such prefix (older releases indent continuation lines instead).
std::string_view body(std::string_view line) {
  if (line.starts_with("ptxas")) {
    line.remove_prefix(5);
    const size_t p = line.find_first_of(":.");
    if (p != std::string_view::npos) line.remove_prefix(p + 1);
  }
  return trim(line);
}

// The name between the first pair of single quotes.
std::string quoted(std::string_view s) {
  const size_t a = s.find('\'');
  if (a == std::string_view::npos) return {};
  const size_t b = s.find('\'', a + 1);
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(a + 1, b - a - 1));
}

// Applies one comma-separated item, "Used 16 registers" or "1048 bytes smem", to r.
void apply_item(std::string_view item, Resources& r) {
  item = trim(item);
  if (item.starts_with("Used ")) item.remove_prefix(5);
  if (item.starts_with("used ")) item.remove_prefix(5);
  long long v = 0;
  const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
  if (ec != std::errc() || v < 0 || v > std::numeric_limits<int>::max()) return;
  const std::string_view unit = trim(item.substr(static_cast<size_t>(end - item.data())));
  const int n = static_cast<int>(v);
  if (unit == "registers") r.registers = n;
  else if (unit == "bytes stack frame") r.stack = n;
  else if (unit == "bytes spill stores") r.spill_stores = n;
  else if (unit == "bytes spill loads") r.spill_loads = n;
  else if (unit == "bytes smem") r.smem_static = n;
  else if (unit == "bytes cmem[0]") r.cmem = n;
  // barriers, cumulative stack size, other constant banks: not part of Resources.
}

void apply_items(std::string_view s, Resources& r) {
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const size_t stop = comma == std::string_view::npos ? s.size() : comma;
    apply_item(s.substr(start, stop - start), r);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
}

}  // namespace

std::map<std::string, Resources> parse_ptxas_report(const std::string& log) {
  std::map<std::string, Resources> out;
  std::string entry;  // the entry function being compiled: owner of "Used ..." lines
  std::string props;  // the function whose "Function properties" block is open
  std::istringstream in(log);
  std::string raw;
  while (std::getline(in, raw)) {
    if (!std::string_view(raw).starts_with("ptxas") && !raw.starts_with(" ")) continue;
    const std::string_view b = body(raw);
    if (b.starts_with("Compiling entry function")) {
      entry = quoted(b);
      props.clear();
      if (!entry.empty()) out[entry].parsed = true;
    } else if (b.starts_with("Function properties for ")) {
      props = std::string(trim(b.substr(24)));
      if (!props.empty()) out[props].parsed = true;
    } else if (b.find("bytes stack frame") != std::string_view::npos) {
      if (!props.empty()) apply_items(b, out[props]);
      props.clear();
    } else if (b.starts_with("Used ")) {
      if (!entry.empty()) apply_items(b, out[entry]);
    }
  }
  return out;
}

}  // namespace soltune
