#pragma once
// The validator: the only way into a task's elite. The evaluator runs the checks (fresh random
// inputs in several distributions and edge rounds, poisoned outputs, guard zones, a double-precision
// reference, a checked timed repetition); the validator admits a result only if every one of them
// passed, its timing is sound, and its time is not under T_SOL (faster than the hardware allows is
// a measurement to distrust, never a win). Predicted results (the model backend) carry no checks
// and are admitted as predictions.
#include <string>

#include "core/measure.hpp"

namespace soltune {

struct Verdict {
  bool admit = false;
  std::string why;  // what failed, "" when admitted
};

class Validator {
 public:
  void set_t_sol(double t_sol_us) { t_sol_us_ = t_sol_us; }
  Verdict check(const EvalResult& r) const;
  int64_t admitted() const { return admitted_; }
  int64_t rejected() const { return rejected_; }
  Verdict judge(const EvalResult& r) {  // check, and count the verdict
    auto v = check(r);
    ++(v.admit ? admitted_ : rejected_);
    return v;
  }

 private:
  double t_sol_us_ = 0;
  int64_t admitted_ = 0, rejected_ = 0;
};

}  // namespace soltune
