#pragma once
// What the knowledge-base tests share: SQL run on a file through SQLite itself (outside the library
// under test), and a fixture with a temporary folder, a problem with two variants, a model device
// (empty UUID) and a real one.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "../support/files.hpp"
#include "core/measure.hpp"
#include "core/task.hpp"

namespace soltune::test {

inline void raw_exec(const std::filesystem::path& p, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(p.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string msg = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << msg;
}

class KbFixture : public ::testing::Test {
 protected:
  explicit KbFixture(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() / (prefix_ + std::to_string(getpid()) + "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    spec_.name = "gelu";
    spec_.variants.resize(2);
    spec_.variants[0].name = "scalar";
    spec_.variants[1].name = "vectorized";
    model_ = *find_known_gpu("H200");  // a model device: empty uuid
    real_ = model_;
    real_.uuid = "GPU-0123-4567";
    real_.driver_version = 13000;
    real_.runtime_version = 12080;
    real_.nvrtc_version = 12080;
    real_.measured = Ceilings{4.1e12, 60e12, 1010e12, "measured"};
    real_.measured->tensor_8 = 1978.9e12;
    real_.measured->tensor_16_probe = 1010e12;
    real_.measured->tensor_8_probe = 1900e12;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Task task(const std::string& variant, DType dt, int64_t n, const ProblemSpec* p = nullptr) const {
    Task t;
    t.problem = p ? p : &spec_;
    t.variant = &t.problem->variant(variant);
    t.dtype = dt;
    t.shape.dims = {{"n", n}};
    return t;
  }

  // A result of configuration `key` with no timing yet: each test fills in the times it needs.
  static EvalResult untimed_result(const std::string& key, Status st, TimeKind kind) {
    EvalResult r;
    r.key = key;
    r.status = st;
    r.kind = kind;
    return r;
  }

  std::string prefix_;
  std::filesystem::path dir_;
  ProblemSpec spec_;
  DeviceInfo model_, real_;
};

}  // namespace soltune::test
