#pragma once
// What the tests of broken templates share: a problem that must fail to load, with an error that
// names the file, the line and what is wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/problem.hpp"

namespace soltune::test {

// Loading `problem` from `templates` must throw an Error whose message holds each of `parts` (such
// as "problem.yaml:12:" and a phrase).
inline void expect_load_refused(const std::filesystem::path& templates, const std::string& problem,
                                const std::vector<std::string>& parts) {
  try {
    load_problem(templates, problem);
    ADD_FAILURE() << "not refused";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << msg;
  }
}

}  // namespace soltune::test
