#pragma once
// f must throw soltune::Error, and its message hold every phrase (file names, lines, what was
// expected): a test of a refusal checks what the user reads.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"

namespace soltune::test {

template <typename F>
void expect_error_with(F&& f, const std::vector<std::string>& phrases) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one that says: " << (phrases.empty() ? "" : phrases.front());
  } catch (const Error& e) {
    for (const auto& p : phrases) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

}  // namespace soltune::test
