#include "codegen/ptxas_report.hpp"

#include <charconv>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

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

// The kind of a note in which ptxas says it undid part of a kernel's design, "(C7519) ...", if it
// is one. The codes are NVRTC 13.0's; the serialisation notes that name no injected instruction
// (C7511: too few registers for the pipeline, C7515: other code writes an accumulator mid-stage...)
// all say "wgmma.mma_async instructions are serialized".
std::optional<PtxasNote::Kind> design_note_kind(std::string_view b) {
  if (b.size() < 7 || !b.starts_with("(C") || b[6] != ')') return std::nullopt;
  const std::string_view code = b.substr(1, 5);
  if (code == "C7517" || code == "C7519" ||
      b.find("wgmma.mma_async instructions are serialized") != std::string_view::npos)
    return PtxasNote::Kind::wgmma_serialized;
  if (code == "C7508" || b.find("'setmaxnreg' ignored") != std::string_view::npos)
    return PtxasNote::Kind::setmaxnreg_ignored;
  return std::nullopt;
}

// The function a note names ("in function '_Z...'", "in the function '_Z...'"), or "". The last
// quotes: C7508's text quotes 'setmaxnreg' before any function.
std::string noted_function(std::string_view b) {
  const size_t p = b.rfind("function '");
  return p == std::string_view::npos ? std::string() : quoted(b.substr(p));
}

void add_note(Resources& r, const PtxasNote& n) {
  for (auto& have : r.notes)
    if (have.kind == n.kind) {
      have.count += n.count;
      return;
    }
  r.notes.push_back(n);
}

}  // namespace

std::map<std::string, Resources> parse_ptxas_report(const std::string& log) {
  std::map<std::string, Resources> out;
  std::set<std::string> entries;
  std::vector<std::pair<std::string, PtxasNote>> notes;  // by function ("": none named)
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
      if (!entry.empty()) {
        out[entry].parsed = true;
        entries.insert(entry);
      }
    } else if (const auto kind = design_note_kind(b)) {
      notes.emplace_back(noted_function(b), PtxasNote{*kind, std::string(b), 1});
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
  // Notes come before the functions they name. One naming a device function, or none, belongs to
  // every kernel of the compile: the report does not say which kernels call what.
  for (const auto& [fn, n] : notes) {
    if (auto it = out.find(fn); it != out.end()) add_note(it->second, n);
    if (!entries.contains(fn))
      for (const auto& e : entries) add_note(out[e], n);
  }
  return out;
}

}  // namespace soltune
