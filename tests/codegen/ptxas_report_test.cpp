// The parser on reports captured from NVRTC 13.0 (--ptxas-options=-v), so the numbers are exact.
#include "codegen/ptxas_report.hpp"

#include <array>
#include <string>

#include <gtest/gtest.h>

namespace soltune {
namespace {

// A function's numbers in the report's order: registers, stack, spill stores and loads, static
// shared memory, constant bank 0.
std::array<int, 6> numbers(const Resources& r) {
  return {r.registers, r.stack, r.spill_stores, r.spill_loads, r.smem_static, r.cmem};
}

// sm_90, --maxrregcount=16 (ptxas raises it to 24): spill<64> spills, shm<256> has 256 floats and
// 3 doubles of static shared memory. Note: no cmem[0] item at all on sm_90.
const char* kSm90 = R"(ptxas warning : For profile sm_90 adjusting per thread register count of 16 to lower bound of 24
ptxas info    : Overriding maximum register limit 256 for '_Z5spillILi64EEvPfPKfi' with  24 of maxrregcount option
ptxas info    : Overriding maximum register limit 256 for '_Z3shmILi256EEvPfPKf' with  24 of maxrregcount option
ptxas info    : Overriding maximum register limit 256 for '_Z5scaleIfLi3EEvPT_S0_i' with  24 of maxrregcount option
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z5spillILi64EEvPfPKfi' for 'sm_90'
ptxas info    : Function properties for _Z5spillILi64EEvPfPKfi
ptxas         .     832 bytes stack frame, 1464 bytes spill stores, 1508 bytes spill loads
ptxas info    : Used 24 registers, used 0 barriers, 832 bytes cumulative stack size
ptxas info    : Compile time = 32.379 ms
ptxas info    : Compiling entry function '_Z3shmILi256EEvPfPKf' for 'sm_90'
ptxas info    : Function properties for _Z3shmILi256EEvPfPKf
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 14 registers, used 1 barriers, 1048 bytes smem
ptxas info    : Compile time = 2.498 ms
ptxas info    : Compiling entry function '_Z5scaleIfLi3EEvPT_S0_i' for 'sm_90'
ptxas info    : Function properties for _Z5scaleIfLi3EEvPT_S0_i
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
ptxas info    : Compile time = 1.031 ms
)";

// sm_80: cmem[0] is printed, user __constant__ data lands in other banks, and a __noinline__
// device function gets its own properties block (after the kernel that calls it) with no "Used".
const char* kSm80 = R"(ptxas info    : 400 bytes gmem, 256 bytes cmem[3], 8 bytes cmem[4]
ptxas info    : Compiling entry function '_Z4usecILi4EEvPfPKf' for 'sm_80'
ptxas info    : Function properties for _Z4usecILi4EEvPfPKf
ptxas         .     128 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 128 bytes cumulative stack size, 368 bytes cmem[0]
ptxas info    : Compile time = 3.303 ms
ptxas info    : Function properties for _Z6helperfi
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'plain' for 'sm_80'
ptxas info    : Function properties for plain
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers, 360 bytes cmem[0]
ptxas info    : Compile time = 0.621 ms
ptxas info    : Compiling entry function '_Z3shmILi256EEvPfPKf' for 'sm_80'
ptxas info    : Function properties for _Z3shmILi256EEvPfPKf
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 16 registers, used 1 barriers, 1048 bytes smem, 368 bytes cmem[0], 8 bytes cmem[2]
ptxas info    : Compile time = 1.848 ms
)";

TEST(PtxasReport, Sm90SpillsAndSharedMemory) {
  const auto m = parse_ptxas_report(kSm90);
  ASSERT_EQ(m.size(), 3u);
  const Resources& s = m.at("_Z5spillILi64EEvPfPKfi");
  EXPECT_TRUE(s.parsed);
  EXPECT_EQ(numbers(s), (std::array{24, 832, 1464, 1508, 0, 0}));

  const Resources& h = m.at("_Z3shmILi256EEvPfPKf");
  EXPECT_EQ(h.registers, 14);
  EXPECT_EQ(h.smem_static, 256 * 4 + 3 * 8);
  EXPECT_EQ(h.spill_stores, 0);
  EXPECT_EQ(h.stack, 0);

  const Resources& k = m.at("_Z5scaleIfLi3EEvPT_S0_i");
  EXPECT_EQ(k.registers, 8);
  EXPECT_TRUE(k.parsed);
}

TEST(PtxasReport, Sm80ConstantBankAndDeviceFunctions) {
  const auto m = parse_ptxas_report(kSm80);
  const Resources& u = m.at("_Z4usecILi4EEvPfPKf");
  EXPECT_EQ(u.registers, 32);
  EXPECT_EQ(u.stack, 128);
  EXPECT_EQ(u.cmem, 368);  // bank 0 only; cmem[3] (the __constant__ array) is not counted
  EXPECT_EQ(m.at("plain").registers, 8);
  EXPECT_EQ(m.at("plain").cmem, 360);
  const Resources& h = m.at("_Z3shmILi256EEvPfPKf");
  EXPECT_EQ(h.registers, 16);
  EXPECT_EQ(h.smem_static, 1048);
  EXPECT_EQ(h.cmem, 368);
  // The helper's block must not leak into the kernel compiled before or after it.
  const Resources& helper = m.at("_Z6helperfi");
  EXPECT_TRUE(helper.parsed);
  EXPECT_EQ(helper.registers, 0);
  EXPECT_EQ(m.at("plain").stack, 0);
}

// The pre-13 layout: continuation lines indented instead of "ptxas .", no barriers item.
TEST(PtxasReport, IndentedContinuationLines) {
  const auto m = parse_ptxas_report(
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z6kernelPf' for 'sm_80'\n"
      "ptxas info    : Function properties for _Z6kernelPf\n"
      "    16 bytes stack frame, 4 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Used 10 registers, 512 bytes smem, 360 bytes cmem[0]\n");
  EXPECT_EQ(numbers(m.at("_Z6kernelPf")), (std::array{10, 16, 4, 8, 512, 360}));
}

// sm_90a, NVRTC 13.0: serial<1> touches its wgmma accumulators between wgmmas without a fence
// (ptxas serialises them), clean<1> fences every group. The notes precede the entry functions.
// The lines NVRTC 13.0 prints for an entry function of 30 registers and 2304 bytes of shared memory.
std::string sm90a_entry(const std::string& name, const char* compile_ms) {
  return "ptxas info    : Compiling entry function '" + name + "' for 'sm_90a'\n"
         "ptxas info    : Function properties for " + name + "\n"
         "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
         "ptxas info    : Used 30 registers, used 1 barriers, 2304 bytes smem\n"
         "ptxas info    : Compile time = " + compile_ms + " ms\n";
}
const std::string kSm90aSerialised = R"(ptxas info    : (C7519) warpgroup.arrive is injected in around line 636 by compiler to allow use of registers in GMMA in function '_Z6serialILi1EEvPfi'
ptxas info    : (C7519) warpgroup.arrive is injected in around line 648 by compiler to allow use of registers in GMMA in function '_Z6serialILi1EEvPfi'
ptxas info    : (C7517) warpgroup.wait is injected in around line 641 by compiler to allow use of registers defined by GMMA in function '_Z6serialILi1EEvPfi'
ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due to insufficient register resources for the wgmma pipeline in the function '_Z6serialILi1EEvPfi'
ptxas info    : 0 bytes gmem
)" + sm90a_entry("_Z6serialILi1EEvPfi", "22.450") + sm90a_entry("_Z5cleanILi1EEvPfi", "7.625");

TEST(PtxasReport, WgmmaSerialisationNotesBelongToTheKernelTheyName) {
  const auto m = parse_ptxas_report(kSm90aSerialised);
  ASSERT_EQ(m.size(), 2u);
  const Resources& s = m.at("_Z6serialILi1EEvPfi");
  EXPECT_EQ(s.registers, 30);
  ASSERT_EQ(s.notes.size(), 1u) << "one note per kind";
  EXPECT_EQ(s.notes[0].kind, PtxasNote::Kind::wgmma_serialized);
  EXPECT_EQ(s.notes[0].count, 4) << "C7519 twice, C7517, C7511";
  EXPECT_EQ(s.notes[0].line,
            "(C7519) warpgroup.arrive is injected in around line 636 by compiler to allow use of registers in GMMA "
            "in function '_Z6serialILi1EEvPfi'");
  const Resources& c = m.at("_Z5cleanILi1EEvPfi");
  EXPECT_EQ(c.registers, 30);
  EXPECT_TRUE(c.notes.empty());
}

// The lines as NVRTC 13.0 prints them, one kind each.
TEST(PtxasReport, EachDesignNoteOnItsOwn) {
  const std::string entry =
      "ptxas info    : Compiling entry function '_Z4gemmv' for 'sm_90a'\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 1024 bytes smem\n";
  const auto wait = parse_ptxas_report(
      "ptxas info    : (C7517) warpgroup.wait is injected in around line 343 by compiler to allow use of registers "
      "defined by GMMA in function '_Z4gemmv'\n" + entry).at("_Z4gemmv");
  ASSERT_EQ(wait.notes.size(), 1u);
  EXPECT_EQ(wait.notes[0].kind, PtxasNote::Kind::wgmma_serialized);
  EXPECT_EQ(wait.notes[0].count, 1);
  EXPECT_TRUE(wait.notes[0].line.starts_with("(C7517) warpgroup.wait is injected in around line 343"));
  EXPECT_EQ(wait.registers, 168);

  const auto arrive = parse_ptxas_report(
      entry + "ptxas info    : (C7519) warpgroup.arrive is injected in around line 1755 by compiler to allow use "
              "of registers in GMMA in function '_Z4gemmv'\n").at("_Z4gemmv");
  ASSERT_EQ(arrive.notes.size(), 1u) << "after the entry function as well as before it";
  EXPECT_EQ(arrive.notes[0].kind, PtxasNote::Kind::wgmma_serialized);

  for (const char* tail : {".", " in function '_Z4gemmv'"}) {
    const std::string line =
        std::string("(C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register count at entry") + tail;
    const auto r = parse_ptxas_report("ptxas info    : " + line + "\n" + entry).at("_Z4gemmv");
    ASSERT_EQ(r.notes.size(), 1u) << line;
    EXPECT_EQ(r.notes[0].kind, PtxasNote::Kind::setmaxnreg_ignored);
    EXPECT_EQ(r.notes[0].line, line);
  }
  // Other coded notes say nothing of the design.
  EXPECT_TRUE(parse_ptxas_report("ptxas info    : (C1234) something else in function '_Z4gemmv'\n" + entry)
                  .at("_Z4gemmv").notes.empty());
}

// A note that names no function (C7508) or a device function belongs to every kernel of the compile.
TEST(PtxasReport, UnattributedNotesBelongToEveryKernel) {
  const auto m = parse_ptxas_report(
      "ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register count at entry.\n"
      "ptxas info    : (C7519) warpgroup.arrive is injected in around line 90 by compiler to allow use of registers in "
      "GMMA in function '_Z6helperv'\n"
      "ptxas info    : Compiling entry function 'ws_a' for 'sm_90a'\n"
      "ptxas info    : Used 8 registers, used 0 barriers\n"
      "ptxas info    : Function properties for _Z6helperv\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Compiling entry function 'ws_b' for 'sm_90a'\n"
      "ptxas info    : Used 168 registers, used 0 barriers\n");
  for (const char* k : {"ws_a", "ws_b"}) {
    const auto& notes = m.at(k).notes;
    ASSERT_EQ(notes.size(), 2u) << k;
    EXPECT_EQ(notes[0].kind, PtxasNote::Kind::setmaxnreg_ignored) << k;
    EXPECT_EQ(notes[1].kind, PtxasNote::Kind::wgmma_serialized) << k;
  }
  ASSERT_EQ(m.at("_Z6helperv").notes.size(), 1u);
  EXPECT_EQ(m.at("_Z6helperv").notes[0].kind, PtxasNote::Kind::wgmma_serialized);
}

TEST(PtxasReport, NoReportOrNoiseGivesNothing) {
  EXPECT_TRUE(parse_ptxas_report("").empty());
  EXPECT_TRUE(parse_ptxas_report("x.cu(3): error: expected a \";\"\n1 error detected\n").empty());
  // Damaged lines are skipped, not fatal; the intact ones still count.
  const auto m = parse_ptxas_report(
      "ptxas info    : Compiling entry function '_Z1kv\n"
      "ptxas info    : Used lots of registers\n"
      "ptxas info    : Compiling entry function '_Z1jv' for 'sm_90'\n"
      "ptxas info    : Used 12 registers, used 0 barriers, garbage, 99999999999999999999 bytes smem\n");
  EXPECT_EQ(m.at("_Z1jv").registers, 12);
  EXPECT_EQ(m.at("_Z1jv").smem_static, 0);
  EXPECT_EQ(m.count("_Z1kv"), 0u);
}

}  // namespace
}  // namespace soltune
