#include "core/measure.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/enum_names.hpp"

namespace soltune {
namespace {
constexpr EnumNames<Status, 8> kStatus{"status",
                                       {{{Status::ok, "ok"},
                                         {Status::compile_error, "compile_error"},
                                         {Status::illegal, "illegal"},
                                         {Status::launch_error, "launch_error"},
                                         {Status::wrong_answer, "wrong_answer"},
                                         {Status::fault, "fault"},
                                         {Status::timeout, "timeout"},
                                         {Status::slow, "slow"}}}};
constexpr EnumNames<TimeKind, 2> kTimeKind{"time kind", {{{TimeKind::measured, "measured"}, {TimeKind::predicted, "predicted"}}}};
double quantile(const std::vector<double>& s, double q) {
  const double pos = q * static_cast<double>(s.size() - 1);
  const auto lo = static_cast<size_t>(pos);
  const auto hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (pos - static_cast<double>(lo)) * (s[hi] - s[lo]);
}
}  // namespace

std::string_view status_name(Status s) { return kStatus.name(s); }
Status parse_status(std::string_view s) { return kStatus.parse(s); }
std::string_view time_kind_name(TimeKind k) { return kTimeKind.name(k); }

double Timing::cv() const { return median_us > 0 ? (q3_us - q1_us) / median_us : 0; }

Timing summarize(std::vector<double> s) {
  Timing t;
  if (s.empty()) return t;
  std::sort(s.begin(), s.end());
  t.reps = static_cast<int>(s.size());
  t.min_us = s.front();
  t.max_us = s.back();
  t.median_us = quantile(s, 0.5);
  t.q1_us = quantile(s, 0.25);
  t.q3_us = quantile(s, 0.75);
  return t;
}

std::string Accuracy::summary() const {
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "%s: %lld checked over %d round(s), %lld mismatches, %lld non-finite, %lld unwritten, "
                "max abs err %.3g, max rel err %.3g, rel L2 %.3g%s%s",
                pass ? "pass" : "FAIL", static_cast<long long>(checked), rounds, static_cast<long long>(mismatches),
                static_cast<long long>(nonfinite), static_cast<long long>(unwritten), max_abs_err, max_rel_err,
                rel_l2, precision_ok ? "" : " (above the dtype's limit: lower precision than declared)",
               out_of_bounds ? (", " + std::to_string(out_of_bounds) + " guard bytes written out of bounds").c_str() : "");
  std::string s = buf;
  if (workspace_dirty)
    s += ", workspace left with " + std::to_string(workspace_dirty) + " non-zero bytes (a kernel must leave it zeroed)";
  if (inputs_written)
    s += ", wrote its input " + written_input + " (" + std::to_string(inputs_written) + " bytes changed; inputs are read-only)";
  if (!detail.empty()) s += "; " + detail;
  return s;
}

void Accuracy::settle(bool band_ok) {
  pass = checked > 0 && band_ok && nonfinite == 0 && unwritten == 0 && precision_ok && out_of_bounds == 0 &&
         workspace_dirty == 0 && inputs_written == 0;
}

std::string Geometry::str() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "grid=(%lld,%lld,%lld) block=(%lld,%lld,%lld) smem=%lld",
                static_cast<long long>(grid[0]), static_cast<long long>(grid[1]), static_cast<long long>(grid[2]),
                static_cast<long long>(block[0]), static_cast<long long>(block[1]), static_cast<long long>(block[2]),
                static_cast<long long>(smem));
  if (cluster_blocks() == 1) return buf;
  char c[80];
  std::snprintf(c, sizeof c, " cluster=(%lld,%lld,%lld)", static_cast<long long>(cluster[0]),
                static_cast<long long>(cluster[1]), static_cast<long long>(cluster[2]));
  return buf + std::string(c);
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  auto ranks = [](const std::vector<double>& v) {
    std::vector<size_t> o(v.size());
    for (size_t i = 0; i < o.size(); ++i) o[i] = i;
    std::stable_sort(o.begin(), o.end(), [&](size_t x, size_t y) { return v[x] < v[y]; });
    std::vector<double> r(v.size());
    for (size_t i = 0; i < o.size();) {  // ties share their mean rank
      size_t j = i;
      while (j + 1 < o.size() && v[o[j + 1]] == v[o[i]]) ++j;
      for (size_t k = i; k <= j; ++k) r[o[k]] = 0.5 * static_cast<double>(i + j);
      i = j + 1;
    }
    return r;
  };
  const auto ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  double ma = 0, mb = 0, c = 0, va = 0, vb = 0;
  for (size_t i = 0; i < a.size(); ++i) ma += ra[i] / n, mb += rb[i] / n;
  for (size_t i = 0; i < a.size(); ++i) {
    c += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  return va > 0 && vb > 0 ? c / std::sqrt(va * vb) : 0;
}

RankAgreement rank_agreement(const std::vector<double>& predicted, const std::vector<double>& measured,
                             const std::vector<size_t>& ks) {
  std::vector<double> pa, ma;
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < predicted.size() && i < measured.size(); ++i) {
    best = std::min(best, measured[i]);
    if (std::isfinite(measured[i]) && std::isfinite(predicted[i])) pa.push_back(predicted[i]), ma.push_back(measured[i]);
  }
  std::vector<size_t> order(std::min(predicted.size(), measured.size()));
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return predicted[a] < predicted[b]; });
  RankAgreement r;
  r.rho = spearman(pa, ma);
  for (size_t k : ks) {
    double top = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < k && i < order.size(); ++i) top = std::min(top, measured[order[i]]);
    r.top_over_best.push_back(top / best);
  }
  return r;
}

}  // namespace soltune
