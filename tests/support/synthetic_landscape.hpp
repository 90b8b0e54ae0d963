#pragma once
// A landscape made up for tests: every legal configuration of a given space with a time from a
// formula, in the format soltune landscape records on a GPU. The replay backend serves it.
#include <functional>
#include <string>
#include <vector>

#include "core/landscape.hpp"

namespace soltune::test {

// knobs: name -> values, in order; f(bindings) -> time in us (<= 0: a compile error).
inline Landscape synthetic_landscape(const std::vector<std::pair<std::string, std::vector<int64_t>>>& knobs,
                                     const std::vector<std::string>& constraints,
                                     const std::function<double(const Bindings&)>& f, int64_t n = 1 << 20) {
  Landscape l;
  l.file = "synthetic_landscape.json";
  l.gpu = "NVIDIA H200";
  l.dtype = DType::f32;
  l.shape.dims = {{"n", n}};
  l.problem.name = "synthetic";
  l.problem.sizes = {"n"};
  l.problem.dtypes = {DType::f32};
  VariantSpec v;
  v.name = "v";
  for (const auto& [name, values] : knobs) v.knobs.push_back(KnobSpec{name, values, ""});
  for (const auto& c : constraints) v.constraints.emplace_back(c, SourceLoc{"synthetic", 0, 0});
  l.problem.variants.push_back(v);
  l.task_id = l.task().id();
  l.fixed = {{"n", static_cast<double>(n)}, {"dtype_bytes", 4}, {"sms", 132}};
  l.baseline.t_ref_us = 1000;
  l.baseline.t_sol_us = 10;
  const Space space(l.variant(), l.fixed);
  for (const auto& c : space.enumerate_legal(1u << 22)) {
    EvalResult r;
    r.key = space.key(c);
    r.config = c;
    const double us = f(space.bind(c));
    r.status = us > 0 ? Status::ok : Status::compile_error;
    r.time.median_us = r.time.q1_us = r.time.q3_us = us > 0 ? us : 0;
    r.time.reps = us > 0 ? 20 : 0;
    r.acc.pass = us > 0;
    r.acc.rounds = us > 0 ? 3 : 0;
    r.acc.checked = us > 0 ? 1 : 0;
    l.results.emplace(r.key, r);
  }
  return l;
}

}  // namespace soltune::test
