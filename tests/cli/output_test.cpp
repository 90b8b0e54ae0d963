// What `-o PATH` does to what is already at PATH (soltune export, kb export-json): a regular file is
// replaced whole and keeps its permissions, a link is followed, a FIFO or a character device is
// written into, a folder is refused; nothing at PATH is ever replaced by another kind of file.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstring>
#include <future>
#include <thread>

#include "cli_fixture.hpp"

namespace soltune {
namespace {

class Output : public Cli {
 protected:
  void SetUp() override {
    Cli::SetUp();
    ASSERT_EQ(tune_gelu(4).code, 0);  // a model-backend knowledge base to export
  }
  Result export_json(const fs::path& out) const { return soltune("kb export-json --kb " + q(kb_) + " -o " + q(out)); }
  Result export_header(const fs::path& out) const {
    return soltune("export --kb " + q(kb_) + " --problem gelu --allow-predicted -o " + q(out));
  }
  static bool is_json_export(const std::string& text) {
    return text.find("\"format\"") != std::string::npos && text.find("\"results\"") != std::string::npos;
  }
};

TEST_F(Output, ALinkIsFollowedAndStaysALink) {
  const auto target = tmp_ / "real.json";
  write(target, "old");
  fs::create_symlink("real.json", tmp_ / "link.json");  // relative, as users make them
  fs::create_directories(tmp_ / "sub");
  fs::create_symlink("../link.json", tmp_ / "sub" / "chain.json");  // a link to a link
  const auto r = export_json(tmp_ / "sub" / "chain.json");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_TRUE(fs::is_symlink(tmp_ / "link.json"));
  EXPECT_TRUE(fs::is_symlink(tmp_ / "sub" / "chain.json"));
  EXPECT_TRUE(is_json_export(read(target))) << read(target).substr(0, 200);
  // The header export writes through a link the same way.
  const auto header = tmp_ / "gelu.cuh";
  fs::create_symlink(header.filename(), tmp_ / "gelu-link.cuh");
  ASSERT_EQ(export_header(tmp_ / "gelu-link.cuh").code, 0);
  EXPECT_TRUE(fs::is_symlink(tmp_ / "gelu-link.cuh"));
  EXPECT_NE(read(header).find("gelu_f32"), std::string::npos);
}

TEST_F(Output, ADanglingLinkCreatesItsTarget) {
  fs::create_symlink("made.json", tmp_ / "dangling.json");
  ASSERT_EQ(export_json(tmp_ / "dangling.json").code, 0);
  EXPECT_TRUE(fs::is_symlink(tmp_ / "dangling.json"));
  EXPECT_TRUE(is_json_export(read(tmp_ / "made.json")));
}

TEST_F(Output, AFifoIsWrittenIntoNotReplaced) {
  const auto fifo = tmp_ / "pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // The reader must be there before the writer's open returns, as with a shell's `cat pipe &`.
  auto reader = std::async(std::launch::async, [&] { return read(fifo); });
  const auto r = export_json(fifo);
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_TRUE(is_json_export(reader.get()));
  EXPECT_EQ(fs::status(fifo).type(), fs::file_type::fifo);
}

TEST_F(Output, ACharacterDeviceIsWrittenIntoNotReplaced) {
  // A null device node of the test's own, so that a soltune that replaced it harms nothing else.
  const auto node = tmp_ / "null";
  if (mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
    GTEST_SKIP() << "cannot make a device node here (mknod: " << std::strerror(errno) << ")";
  for (const auto& r : {export_json(node), export_header(node)}) {
    ASSERT_EQ(r.code, 0) << r;
    EXPECT_EQ(fs::status(node).type(), fs::file_type::character);
  }
  EXPECT_EQ(read(node), "");  // still the null device: what was written went nowhere
}

TEST_F(Output, AFolderIsRefusedAndLeftAlone) {
  const auto dir = tmp_ / "out";
  fs::create_directories(dir);
  write(dir / "keep.txt", "mine");
  for (const auto& r : {export_json(dir), export_header(dir)}) {
    EXPECT_EQ(r.code, 1) << r;
    EXPECT_NE(r.err.find("is a folder"), std::string::npos) << r;
  }
  EXPECT_TRUE(fs::is_directory(dir));
  EXPECT_EQ(read(dir / "keep.txt"), "mine");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 1);
}

TEST_F(Output, ARegularFileIsReplacedWholeAndKeepsItsPermissions) {
  const auto out = tmp_ / "kb.json";
  write(out, "old");
  fs::permissions(out, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  ASSERT_EQ(export_json(out).code, 0);
  EXPECT_TRUE(is_json_export(read(out)));
  EXPECT_EQ(fs::status(out).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  // Nothing left beside it: the temporary file was renamed into place.
  for (const auto& e : fs::directory_iterator(tmp_))
    EXPECT_EQ(e.path().filename().string().find(".soltune-"), std::string::npos) << e.path();
}

TEST_F(Output, AFailedWriteLeavesTheOldFile) {
  // A folder where no file can be made: the old text stays, and the error names the path.
  const auto dir = tmp_ / "locked";
  fs::create_directories(dir);
  const auto out = dir / "kb.json";
  write(out, "old");
  if (geteuid() == 0) {
    // Root writes through permissions: fill a tiny file system of the test's own instead.
    const auto r = shell("unshare -m sh -c " +
                         q("mount -t tmpfs -o size=8k tmpfs " + dir.string() + " && echo old > " + out.string() +
                           " && " + kSoltune.string() + " kb export-json --kb " + kb_.string() + " -o " + out.string() +
                           "; echo exit $? ; cat " + out.string()) +
                         " >" + q(tmp_ / "stdout.txt") + " 2>" + q(tmp_ / "stderr.txt"));
    if (r.out.find("exit ") == std::string::npos) GTEST_SKIP() << "cannot mount a small file system here: " << r;
    EXPECT_NE(r.out.find("exit 1"), std::string::npos) << r;
    EXPECT_NE(r.out.find("\nold"), std::string::npos) << r;
    EXPECT_NE(r.err.find(out.string() + ": cannot write"), std::string::npos) << r;
    return;
  }
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
  const auto r = export_json(out);
  fs::permissions(dir, fs::perms::owner_all);
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find(out.string() + ": cannot write"), std::string::npos) << r;
  EXPECT_EQ(read(out), "old");
}

}  // namespace
}  // namespace soltune
