#include "kb/table_columns.hpp"

#include <string_view>
#include <type_traits>

#include "core/fields.hpp"

namespace soltune::kb {
namespace {

using G = GpuRecord;

// A measured-or-predicted column held by a TimeKind member (`Path` as member_column's); a text
// other than "predicted" reads as measured.
template <typename Rec, auto... Path>
Column<Rec> kind_column(std::string name) {
  return {name, true, [name](sqlite::Stmt& st, const Rec& r) { st.bind(name, time_kind_name((r .* ... .* Path))); },
          [name](const sqlite::Stmt& st, Rec& r) {
            (r .* ... .* Path) = st.text(name) == "predicted" ? TimeKind::predicted : TimeKind::measured;
          }};
}

// The ceilings a GPU row stores: the datasheet's, or the measured ones (zeros where none were).
const Ceilings& stored(const G& g, bool measured) {
  static const Ceilings none;
  if (!measured) return g.device.datasheet;
  return g.device.measured ? *g.device.measured : none;
}
// Where a row's figures are read into: nullptr for the measured ones of a row that has none
// (has_measured, read before them, decides).
Ceilings* target(G& g, bool measured) {
  if (!measured) return &g.device.datasheet;
  return g.device.measured ? &*g.device.measured : nullptr;
}

// The figures of one Ceilings, each a column <which>_<figure>. A datasheet gives no read bandwidth
// and no probe figures: only a measurement has them.
void add_ceilings(std::vector<Column<G>>& out, bool measured) {
  const std::string which = measured ? "measured" : "datasheet";
  for_each_field(kFields<Ceilings>, [&](const auto& f) {
    if constexpr (std::is_same_v<typename std::decay_t<decltype(f)>::Value, double>) {
      const std::string_view figure = f.name;
      if (!measured && (figure == "read_bw" || figure.ends_with("_probe"))) return;
      const auto m = f.member;
      const std::string name = which + "_" + f.name;
      out.push_back({name, true, [=](sqlite::Stmt& st, const G& g) { st.bind(name, stored(g, measured).*m); },
                     [=](const sqlite::Stmt& st, G& g) {
                       if (Ceilings* c = target(g, measured)) {
                         get(st, name, c->*m, true);
                         c->source = which;
                       }
                     }});
    }
  });
}

std::vector<Column<G>> make_gpu_columns() {
  std::vector<Column<G>> out{member_column<G, &G::id>("id", false)};
  for_each_field(kFields<DeviceInfo>, [&](const auto& f) {
    using V = typename std::decay_t<decltype(f)>::Value;
    if constexpr (std::is_same_v<V, Ceilings>) {
      add_ceilings(out, false);
    } else {
      const auto m = f.member;
      const std::string name = f.name;
      out.push_back({name, true, [=](sqlite::Stmt& st, const G& g) { st.bind(name, g.device.*m); },
                     [=](const sqlite::Stmt& st, G& g) { get(st, name, g.device.*m); }});
    }
  });
  out.push_back(kind_column<G, &G::kind>("kind"));
  out.push_back({"has_measured", true,
                 [](sqlite::Stmt& st, const G& g) { st.bind("has_measured", g.device.measured.has_value()); },
                 [](const sqlite::Stmt& st, G& g) {
                   if (st.i64("has_measured") != 0) g.device.measured.emplace();
                 }});
  add_ceilings(out, true);
  out.push_back(member_column<G, &G::first_seen_at>("first_seen_at", false));
  out.push_back(member_column<G, &G::last_seen_at>("last_seen_at", false));
  return out;
}

using R = RunRecord;
using B = BaselineRecord;

std::vector<Column<B>> make_baseline_columns() {
  std::vector<Column<B>> out = {
      member_column<B, &B::id>("id", false),
      member_column<B, &B::run_id>("run_id", false),
      member_column<B, &B::problem>("problem"),
      member_column<B, &B::variant>("variant"),
      member_column<B, &B::dtype>("dtype"),
      member_column<B, &B::shape_key>("shape_key"),
      kind_column<B, &B::baseline, &TaskBaseline::kind>("time_kind"),
      member_column<B, &B::baseline, &TaskBaseline::t_ref_us>("t_ref_us"),
      member_column<B, &B::baseline, &TaskBaseline::t_sol_us>("t_sol_us"),
      member_column<B, &B::baseline, &TaskBaseline::flops>("flops"),
      member_column<B, &B::baseline, &TaskBaseline::bytes>("bytes")};
  for_each_field(kFields<Timing>, [&](const auto& f) {
    const auto m = f.member;
    const std::string name = std::string("ref_") + f.name;
    out.push_back({name, true, [=](sqlite::Stmt& st, const B& b) { st.bind(name, b.baseline.ref_timing.*m); },
                   [=](const sqlite::Stmt& st, B& b) { get(st, name, b.baseline.ref_timing.*m); }});
  });
  out.push_back(member_column<B, &B::baseline, &TaskBaseline::note>("note"));
  out.push_back(member_column<B, &B::baseline, &TaskBaseline::source>("ref_source"));
  out.push_back(member_column<B, &B::created_at>("created_at", false));
  return out;
}

}  // namespace

const std::vector<Column<B>>& baseline_columns() {
  static const auto c = make_baseline_columns();
  return c;
}

const std::vector<Column<G>>& gpu_columns() {
  static const auto c = make_gpu_columns();
  return c;
}

const std::vector<Column<R>>& run_columns() {
  static const std::vector<Column<R>> c = {
      member_column<R, &R::id>("id", false),
      member_column<R, &R::gpu_id>("gpu_id", false),
      member_column<R, &R::info, &RunInfo::problem>("problem"),
      member_column<R, &R::info, &RunInfo::config_path>("config_path"),
      // The seed's 64 bits in SQLite's signed integer, read back as they were.
      {"seed", true, [](sqlite::Stmt& st, const R& r) { st.bind("seed", static_cast<int64_t>(r.info.seed)); },
       [](const sqlite::Stmt& st, R& r) { r.info.seed = static_cast<uint64_t>(st.i64("seed")); }},
      member_column<R, &R::info, &RunInfo::backend>("backend"),
      member_column<R, &R::info, &RunInfo::budget_text>("budget"),
      member_column<R, &R::info, &RunInfo::soltune_version>("soltune_version"),
      member_column<R, &R::info, &RunInfo::command_line>("command_line"),
      member_column<R, &R::info, &RunInfo::toolchain>("toolchain"),
      member_column<R, &R::info, &RunInfo::settings>("settings"),
      member_column<R, &R::info, &RunInfo::pid>("pid"),
      member_column<R, &R::info, &RunInfo::host>("host"),
      member_column<R, &R::status>("status", false),
      member_column<R, &R::started_at>("started_at", false),
      member_column<R, &R::finished_at>("finished_at", false),  // NULL while running: reads as ""
      member_column<R, &R::notes>("notes", false),
  };
  return c;
}

}  // namespace soltune::kb
