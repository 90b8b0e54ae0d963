// Hostile paths in every path a command takes: a loop of links, a dangling link, a name or a whole
// path too long for the system, a folder where a file belongs, a file where a folder belongs, an
// empty name, a newline, a missing folder, /dev/null. Each command either works or ends with a
// clear error (exit 1 or 2, a message on stderr), never an internal error (exit 3) or a hang.
#include <unistd.h>

#include <filesystem>

#include <string>
#include <vector>

#include "cli_fixture.hpp"

namespace soltune {
namespace {

class PathFuzz : public Cli {};

TEST_F(PathFuzz, EveryPathArgumentTakesHostilePathsWithoutAnInternalError) {
  ASSERT_EQ(tune_gelu(2).code, 0);
  ASSERT_EQ(soltune("kb export-json --kb " + q(kb_) + " -o good.json").code, 0);
  fs::create_symlink("loop1", tmp_ / "loop2");
  fs::create_symlink("loop2", tmp_ / "loop1");
  fs::create_symlink("nowhere/file", tmp_ / "dangling");
  fs::create_directories(tmp_ / "folder");
  write(tmp_ / "plain", "not a folder\n");
  std::string too_long_path;
  while (too_long_path.size() < 5000) too_long_path += "d123456789/";
  const std::vector<std::string> hostile = {
      "loop1", "dangling", std::string(300, 'n'), too_long_path + "x", "folder", "plain/x", "", "new\nline",
      "missing/x.json", "/dev/null"};
  const std::string cfg = q(kSource / "configs" / "gelu.yaml");
  // Each a command line with @P@ where the hostile path goes.
  const std::vector<std::string> commands = {
      "tune @P@ --backend model --evals 1",
      "tune " + cfg + " --backend model --evals 1 --kb @P@",
      "tune " + cfg + " --backend replay --landscape @P@ --evals 1 --kb other.sqlite",
      "export --kb " + q(kb_) + " --problem gelu -o @P@",
      "export --kb @P@ --problem gelu -o out.cuh",
      "export --kb " + q(kb_) + " --problem gelu -o out2.cuh --templates @P@",
      "audit --kb @P@ --problem gelu",
      "landscape " + cfg + " --backend model --dtype f32 --shape n=1000003 -o @P@",
      "bench-search --landscape @P@",
      "kb list --kb @P@",
      "kb best --kb @P@ --problem gelu",
      "kb export-json --kb " + q(kb_) + " -o @P@",
      "kb import-json --kb imported.sqlite @P@",
      "kb import-json --kb @P@ good.json",
  };
  for (const auto& command : commands)
    for (const auto& path : hostile) {
      // /dev/null is a fine place for output, where the command then does its whole work: left out
      // of the landscape, which would measure every configuration first.
      if (path == "/dev/null" && command.rfind("landscape", 0) == 0) continue;
      std::string line = command;
      line.replace(line.find("@P@"), 3, "'" + path + "'");
      const auto r = soltune_within(line, 60);
      SCOPED_TRACE(line.substr(0, 200));
      EXPECT_NE(r.code, 3) << r;
      EXPECT_NE(r.code, 124) << "did not end within 60 s";
      EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r;
      if (r.code != 0) {
        EXPECT_FALSE(r.err.empty()) << r;
      }
    }
}

// A template folder soltune may not read: a clear error naming the file and the cause. As root
// (which reads it anyway) the command runs as nobody, where setpriv can arrange it.
TEST_F(PathFuzz, AnUnreadableTemplateFolderIsAClearError) {
  fs::copy(kSource / "templates", tmp_ / "templates", fs::copy_options::recursive);
  fs::create_directories(tmp_ / "configs");
  ASSERT_TRUE(test::write_file(tmp_ / "configs" / "gelu.yaml", read(kSource / "configs" / "gelu.yaml")));
  fs::create_directories(tmp_ / "out");
  fs::permissions(tmp_ / "out", fs::perms::all);
  fs::permissions(tmp_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(tmp_ / "templates" / "gelu", fs::perms::none);
  std::string as = "";
  if (::getuid() == 0) {
    as = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    if (shell(as + q(kSoltune) + " --version >/dev/null 2>&1").code != 0)
      GTEST_SKIP() << "cannot run soltune as another user here (setpriv, or a path nobody may read)";
  }
  const auto r = shell("cd " + q(tmp_) + " && SOLTUNE_CACHE_DIR=off " + as + q(kSoltune) +
                       " tune configs/gelu.yaml --backend model --evals 2 --kb out/k.sqlite >" + q(tmp_ / "stdout.txt") +
                       " 2>" + q(tmp_ / "stderr.txt"));
  fs::permissions(tmp_ / "templates" / "gelu", fs::perms::owner_all);  // for the clean-up
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("templates/gelu/problem.yaml: Permission denied"), std::string::npos) << r;
}

}  // namespace
}  // namespace soltune
