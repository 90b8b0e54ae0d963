// What `-o PATH` does to what is already at PATH (soltune export, kb export-json): a regular file is
// replaced whole and keeps its permissions, a link is followed, a FIFO or a character device is
// written into, a folder is refused; nothing at PATH is ever replaced by another kind of file.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstring>
#include <future>
#include <regex>
#include <thread>

#include "cli_fixture.hpp"
#include "core/landscape.hpp"

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
    expect_run(r, 1, {"is a folder"});
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

// Standard output, however it is named (/dev/stdout, /dev/fd/1, -), is written where the shell left
// it: after what came before, appended under >>, into a pipe; the report of what was written goes to
// standard error, out of the way.
TEST_F(Output, StandardOutputIsWrittenWhereTheShellLeftIt) {
  const auto bundle = tmp_ / "bundle.txt";
  for (const std::string name : {"/dev/stdout", "/dev/fd/1", "-"}) {
    const auto r = shell("cd " + q(tmp_) + " && { echo '// header'; " + q(kSoltune) + " kb export-json --kb " + q(kb_) +
                         " -o " + name + "; echo '// footer'; } > " + q(bundle) + " 2>" + q(tmp_ / "stderr.txt"));
    ASSERT_EQ(r.code, 0) << name << ": " << r;
    const auto text = read(bundle);
    EXPECT_EQ(text.rfind("// header\n{", 0), 0u) << name << ": " << text.substr(0, 80);
    EXPECT_TRUE(is_json_export(text)) << name;
    EXPECT_NE(text.find("}\n// footer\n"), std::string::npos) << name << ": " << text.substr(text.size() - std::min<size_t>(text.size(), 80));
  }
  // >> appends to a log; the exported header's report goes to stderr, not into the log.
  const auto log = tmp_ / "app.log";
  write(log, "earlier line\n");
  const auto r = shell("cd " + q(tmp_) + " && " + q(kSoltune) + " export --kb " + q(kb_) +
                       " --problem gelu --allow-predicted -o /dev/stdout >> " + q(log) + " 2>" + q(tmp_ / "stderr.txt"));
  ASSERT_EQ(r.code, 0) << r;
  const auto text = read(log);
  EXPECT_EQ(text.rfind("earlier line\n// soltune export", 0), 0u) << text.substr(0, 120);
  EXPECT_EQ(text.find("wrote /dev/stdout"), std::string::npos);
  EXPECT_NE(r.err.find("wrote /dev/stdout"), std::string::npos) << r;
  // Into a pipe: the whole export, the same bytes as a file gets.
  ASSERT_EQ(export_json(tmp_ / "file.json").code, 0);
  const auto piped = shell("cd " + q(tmp_) + " && " + q(kSoltune) + " kb export-json --kb " + q(kb_) +
                           " -o /dev/stdout | cat > " + q(tmp_ / "piped.json"));
  ASSERT_EQ(piped.code, 0) << piped;
  const auto a = read(tmp_ / "file.json"), b = read(tmp_ / "piped.json");
  // The exports differ only in their time stamp.
  EXPECT_EQ(a.size(), b.size());
  EXPECT_TRUE(is_json_export(b));
}

// A landscape recorded to standard output or a FIFO: written once, whole, at the end (a file is
// rewritten after every batch, which a stream cannot be), and never read back; --resume refused.
TEST_F(Output, ALandscapeGoesToAPipeOrAFifoOnceAndWhole) {
  // GELU with four configurations, so that the recording is short.
  fs::create_directories(tmp_ / "templates");
  fs::copy(kSource / "templates" / "gelu", tmp_ / "templates" / "gelu", fs::copy_options::recursive);
  auto yaml = read(tmp_ / "templates" / "gelu" / "vectorized.yaml");
  for (const auto& [knob, values] : std::vector<std::pair<std::string, std::string>>{
           {"BLOCK", "128, 256"}, {"EPT", "1, 2"}, {"VEC", "4"}, {"GRID_STRIDE", "0"}, {"FAST_TANH", "0"},
           {"CACHE_HINT", "0"}, {"BLOCKS_PER_SM", "1"}})
    yaml = std::regex_replace(yaml, std::regex(knob + ": \\{values: \\[[^\\]]*\\]"), knob + ": {values: [" + values + "]");
  write(tmp_ / "templates" / "gelu" / "vectorized.yaml", yaml);
  const auto cfg = tmp_ / "one.yaml";
  write(cfg, "problem: gelu\nvariants: [vectorized]\ndtypes: [f32]\nshapes: [{n: 100000}]\nbudget: {evals: 4}\nseed: 1\n"
             "templates: templates\n");
  const std::string land = q(kSoltune) + " landscape " + q(cfg) + " --backend model --batch 64 ";
  // A time limit: a landscape that waits on its own output fails here instead of hanging the suite.
  auto r = shell("cd " + q(tmp_) + " && timeout 120 " + land + "-o /dev/stdout 2>" + q(tmp_ / "stderr.txt") +
                 " | cat > " + q(tmp_ / "piped.json"));
  ASSERT_EQ(r.code, 0) << r;
  const auto text = read(tmp_ / "piped.json");
  EXPECT_EQ(text.find("\"task\""), text.rfind("\"task\"")) << "one document, not one per batch";
  EXPECT_NO_THROW(load_landscape(tmp_ / "piped.json"));
  EXPECT_NE(r.err.find("-> /dev/stdout"), std::string::npos) << r;
  r = shell("cd " + q(tmp_) + " && timeout 60 " + land + "-o /dev/stdout --resume >/dev/null 2>" + q(tmp_ / "stderr.txt"));
  expect_run(r, 2, {"is a stream"});
  const auto fifo = tmp_ / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  r = shell("cd " + q(tmp_) + " && (timeout 60 cat " + q(fifo) + " > " + q(tmp_ / "from_fifo.json") + " &) && timeout 120 " +
            land + "-o " + q(fifo) + " >/dev/null 2>" + q(tmp_ / "stderr.txt") + " && sleep 0.2");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NO_THROW(load_landscape(tmp_ / "from_fifo.json"));
}

}  // namespace
}  // namespace soltune
