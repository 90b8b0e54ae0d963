// A knowledge base on a read-only medium (a bind mount remounted read-only, in a mount namespace of
// the test's own): the reading commands read it, and the writing ones say that it is read-only.
#include <unistd.h>

#include "cli_fixture.hpp"

namespace soltune {
namespace {

class ReadOnlyKb : public Cli {
 protected:
  // Runs `commands` (sh) with tmp_/ro a read-only view of tmp_/rw; stdout and stderr as usual.
  // Skips the test where no mount namespace can be made.
  Result on_read_only_medium(const std::string& commands) {
    const auto script = tmp_ / "script.sh";
    write(script, "mount --bind rw ro && mount -o remount,bind,ro ro || exit 99\n" + commands);
    const std::string unshare = geteuid() == 0 ? "unshare -m" : "unshare -rm";
    auto r = shell("cd " + q(tmp_) + " && " + unshare + " sh " + q(script) + " >" + q(tmp_ / "stdout.txt") + " 2>" +
                   q(tmp_ / "stderr.txt"));
    return r;
  }
};

TEST_F(ReadOnlyKb, ReadingCommandsReadItAndWritingOnesSaySo) {
  fs::create_directories(tmp_ / "rw");
  fs::create_directories(tmp_ / "ro");
  kb_ = tmp_ / "rw" / "kb.sqlite";
  ASSERT_EQ(tune_gelu(4).code, 0);
  const std::string s = q(kSoltune), kb = "ro/kb.sqlite";
  const auto r = on_read_only_medium(
      s + " kb list --kb " + kb + " && echo LIST-OK\n" +
      s + " kb best --kb " + kb + " --problem gelu && echo BEST-OK\n" +
      s + " kb show --kb " + kb + " 1 && echo SHOW-OK\n" +
      s + " kb export-json --kb " + kb + " -o kb.json && echo JSON-OK\n" +
      s + " export --kb " + kb + " --problem gelu --allow-predicted -o gelu.cuh && echo EXPORT-OK\n" +
      s + " tune " + q(kSource / "configs" / "gelu.yaml") + " --backend model --evals 4 --kb " + kb + "; echo tune $?\n" +
      s + " tune " + q(kSource / "configs" / "gelu.yaml") + " --backend model --evals 4 --kb ro/new.sqlite; echo new $?\n" +
      s + " kb import-json --kb " + kb + " kb.json; echo import $?\n");
  if (r.code == 99) GTEST_SKIP() << "cannot make a read-only mount here: " << r;
  for (const char* ok : {"LIST-OK", "BEST-OK", "SHOW-OK", "JSON-OK", "EXPORT-OK"})
    EXPECT_NE(r.out.find(ok), std::string::npos) << ok << "\n" << r;
  EXPECT_EQ(r.err.find("unable to open database file"), std::string::npos) << r;
  for (const char* code : {"tune 1", "new 1", "import 1"}) EXPECT_NE(r.out.find(code), std::string::npos) << code << "\n" << r;
  EXPECT_NE(r.err.find("ro/kb.sqlite: the knowledge base is read-only (on a read-only file system)"), std::string::npos) << r;
  EXPECT_NE(r.err.find("ro/new.sqlite: its folder ro is read-only"), std::string::npos) << r;
  EXPECT_TRUE(fs::exists(tmp_ / "gelu.cuh"));
  EXPECT_FALSE(fs::exists(tmp_ / "rw" / "new.sqlite"));
}

// A read leaves nothing beside the file: no -wal or -shm after the reading commands, whether the file
// is writable or mode 444 (whose leftovers, mode 444 too, made a later writer fail). A damaged file is
// called damaged, with the path and what to do, and is left as it was.
TEST_F(ReadOnlyKb, ReadsLeaveNothingBehindAndADamagedFileIsSaidToBe) {
  ASSERT_EQ(tune_gelu(4).code, 0);
  const std::string s = q(kSoltune);
  auto leftovers = [&](const fs::path& f) {
    return fs::exists(f.string() + "-wal") || fs::exists(f.string() + "-shm");
  };
  for (const std::string cmd : {"kb list --kb ", "kb show --kb ", "kb best --problem gelu --kb "}) {
    const auto r = soltune(cmd + q(kb_) + (cmd.rfind("kb show", 0) == 0 ? " 1" : ""));
    EXPECT_EQ(r.code, 0) << cmd << r;
    EXPECT_FALSE(leftovers(kb_)) << cmd;
  }
  fs::permissions(kb_, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  EXPECT_EQ(soltune("kb list --kb " + q(kb_)).code, 0);
  EXPECT_FALSE(leftovers(kb_)) << "after a read of a mode-444 file";
  fs::permissions(kb_, fs::perms::owner_write, fs::perm_options::add);
  EXPECT_EQ(tune_gelu(4).code, 0) << "a writer after the read";
  // Cut short, as a copy interrupted or a full disk leaves it.
  const auto cut = tmp_ / "cut.sqlite";
  write(cut, read(kb_).substr(0, 20000));
  const auto before = read(cut);
  const auto r = soltune("kb list --kb " + q(cut));
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find(cut.string() + ": the knowledge base is damaged ("), std::string::npos) << r;
  EXPECT_NE(r.err.find("Restore it from a copy"), std::string::npos) << r;
  EXPECT_EQ(r.err.find("[SQL:"), std::string::npos) << r;
  EXPECT_EQ(read(cut), before);
  EXPECT_FALSE(leftovers(cut));
}

}  // namespace
}  // namespace soltune
