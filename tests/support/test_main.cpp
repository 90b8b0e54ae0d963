// The main of every test program: GoogleTest's, with an NVRTC cache of the program's own in a
// temporary folder (removed at the end) unless SOLTUNE_CACHE_DIR says otherwise, so that tests
// never fill the user's real cache ($XDG_CACHE_HOME/soltune/nvrtc).
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <string>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string own;
  if (!std::getenv("SOLTUNE_CACHE_DIR")) {
    std::string dir = (std::filesystem::temp_directory_path() / "soltune-test-cache-XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr) {
      std::perror("mkdtemp");
      return 1;
    }
    own = dir;
    setenv("SOLTUNE_CACHE_DIR", own.c_str(), 1);
  }
  const int rc = RUN_ALL_TESTS();
  if (!own.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(own, ec);
  }
  return rc;
}
