// soltune export --format python: the package builds from the exported headers (nvcc), imports
// with the standard library alone, and refuses what its kernels cannot serve before anything runs,
// naming the argument. The arrays here are stand-ins that offer __cuda_array_interface__ or DLPack
// and no memory: every refusal must come before the device is touched (CI has none).
#include "cli_fixture.hpp"
#include "core/cuda_tools.hpp"

namespace soltune {
namespace {

class PythonExport : public Cli {
 protected:
  void SetUp() override {
    Cli::SetUp();
    share_compile_cache();
    if (!find_cuda_tool("nvcc")) GTEST_SKIP() << "no nvcc: the package's kernels cannot be built here";
    if (std::system("python3 -c 'import ctypes, json' > /dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
    for (const char* p : {"softmax", "l1norm"}) {
      const auto r = soltune("tune " + q(kSource / "configs" / (std::string(p) + ".yaml")) +
                             " --backend model --evals 4 --kb " + q(kb_) + " -q");
      ASSERT_EQ(r.code, 0) << r;
    }
  }
  // Runs a Python script with the package's folder on the path; its stdout.
  Result python(const std::string& script) const {
    write(tmp_ / "t.py", "import sys\nsys.path.insert(0, " + py(tmp_ / "pkg") + ")\n" + script);
    return shell("cd " + q(tmp_) + " && python3 t.py > " + q(tmp_ / "stdout.txt") + " 2> " + q(tmp_ / "stderr.txt"));
  }
  static std::string py(const fs::path& p) { return "'" + p.string() + "'"; }
};

// An array's stand-in: shape, type string, address and byte strides, as CuPy would describe it.
const char* kFake = R"(
class Fake:
    def __init__(self, shape, typestr="<f4", ptr=0x7f0000000000, strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, False),
                                         "version": 3, "strides": strides}

# A DLPack producer's stand-in: a DLManagedTensor in a capsule named "dltensor", with no memory behind
# its pointer. Its bytes are spelled out from dlpack.h's layout on a 64-bit host (data; device type
# and id; ndim; dtype code, bits, lanes; shape; strides; byte_offset; manager_ctx; deleter), apart
# from the runtime's own reading of it.
import ctypes, struct
capsule_new = ctypes.pythonapi.PyCapsule_New
capsule_new.restype = ctypes.py_object
capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

class DLFake:
    def __init__(self, shape, code=2, bits=32, device=(2, 0), ptr=0x7f0000000000, strides=None):
        self.device = device
        self.dims = (ctypes.c_int64 * len(shape))(*shape)
        self.steps = (ctypes.c_int64 * len(shape))(*strides) if strides else None
        steps = ctypes.addressof(self.steps) if strides else 0
        self.held = ctypes.create_string_buffer(struct.pack(
            "<QiiiBBHQQQQQ", ptr, device[0], device[1], len(shape), code, bits, 1, ctypes.addressof(self.dims),
            steps, 0, 0, 0))
    def __dlpack_device__(self):
        return self.device
    def __dlpack__(self, stream=None):
        return capsule_new(ctypes.addressof(self.held), b"dltensor", None)

def refused(f):
    try:
        f()
    except ValueError as e:
        print("ValueError:", e)
        return
    print("not refused")
)";

// torch as the package sees it when tracing: tensors of a shape and dtype, and a torch.library that
// keeps each fake the package registers (fakes["soltune::<problem>"]).
const char* kStandInTorch = R"(
float32 = "float32"
bfloat16 = "bfloat16"
class Tensor:
    def __init__(self, shape, dtype=float32): self.shape, self.dtype = tuple(shape), dtype
    def new_empty(self, dims, dtype=None): return Tensor(dims, dtype)
fakes = {}
class library:
    class Library:
        def __init__(self, ns, kind): pass
        def define(self, schema): pass
        def impl(self, name, fn, key): pass
    @staticmethod
    def register_fake(name, fn, lib=None): fakes[name] = fn
)";

TEST_F(PythonExport, ThePackageBuildsImportsAndRefusesWhatItCannotServe) {
  auto r = soltune("export --kb " + q(kb_) + " --problem softmax --problem l1norm --format python --name tuned "
                   "--allow-predicted -o " + q(tmp_ / "pkg"));
  ASSERT_EQ(r.code, 0) << r;
  for (const char* f : {"__init__.py", "_kernels.cu", "_kernels.so", "_problems.json", "softmax.cuh", "l1norm.cuh"})
    EXPECT_TRUE(fs::exists(tmp_ / "pkg" / "tuned" / f)) << f;
  EXPECT_NE(r.out.find("its kernels built by"), std::string::npos) << r;

  r = python(std::string("import tuned\n") + kFake + R"(
print(sorted(tuned.__all__))
print(tuned.softmax.__doc__.splitlines()[0])
refused(lambda: tuned.softmax(Fake((4, 8), "<i4")))                    # dtype
refused(lambda: tuned.softmax(Fake((4, 8)), Fake((4, 8))))             # arity
refused(lambda: tuned.softmax(Fake((32,))))                            # rank
refused(lambda: tuned.softmax(Fake((4, 8), strides=(4, 16))))          # a transposed view
refused(lambda: tuned.softmax(Fake((4, 8)), out=Fake((4, 9))))         # the output's shape
refused(lambda: tuned.softmax(Fake((4, 8)), out=Fake((4, 8), "<f2")))  # the output's dtype
refused(lambda: tuned.softmax(Fake((4, 8), ptr=0x7f0000000004)))       # alignment
refused(lambda: tuned.softmax(Fake((4, 8)), rows=3))                   # a size the array contradicts
refused(lambda: tuned.softmax(Fake((4, 8)), width=3))                  # no such size
refused(lambda: tuned.l1norm([1.0, 2.0]))                              # not a GPU array
refused(lambda: tuned.softmax(Fake((4, 8))))                           # no device to hold it (CI)
refused(lambda: tuned.softmax(DLFake((4, 8), device=(1, 0))))          # DLPack: on the host
refused(lambda: tuned.softmax(DLFake((4, 8), code=0, bits=16)))        # DLPack: dtype
refused(lambda: tuned.softmax(DLFake((2, 8), strides=(1, 2))))         # DLPack: a transposed view
refused(lambda: tuned.softmax(DLFake((4, 8)), out=DLFake((4, 8), code=4, bits=16)))  # DLPack: bf16 output
refused(lambda: tuned.softmax(DLFake((4, 8), ptr=0x7f0000000008)))     # DLPack: alignment
refused(lambda: tuned.softmax(DLFake((4, 8))))                         # DLPack: no library to allocate y
)");
  ASSERT_EQ(r.code, 0) << r;
  const std::string out = read(tmp_ / "stdout.txt");
  for (const char* expected : {
           "['l1norm', 'l1norm_choice', 'softmax', 'softmax_choice']",
           "softmax(x, out=None, stream=None, **sizes)",
           "ValueError: x: dtype i32; the exported kernels take",
           "ValueError: softmax takes 1 array(s) (x), got 2",
           "ValueError: x: 1 dimension(s); expected 2 (rows, cols)",
           "ValueError: x: strides (1, 4); the kernels take contiguous (row-major) arrays",
           "ValueError: y: shape (4, 9); expected (4, 8) at rows=4, cols=8",
           "ValueError: y: dtype f16; expected f32",
           "ValueError: x: its data starts at 0x7f0000000004, not 16-byte aligned",
           "ValueError: x: shape (4, 8); expected (3, 8) at rows=3, cols=8",
           "ValueError: softmax has no size 'width' (its sizes: rows, cols)",
           "ValueError: x: list offers neither __cuda_array_interface__ nor __dlpack__",
           "ValueError: x: cannot tell where its memory lies",
           "ValueError: x: DLPack device type 1 (1 is the host); the kernels take CUDA memory",
           "ValueError: x: dtype i16; the exported kernels take",
           "ValueError: x: strides (1, 2); the kernels take contiguous (row-major) arrays",
           "ValueError: y: dtype bf16; expected f32",
           "ValueError: x: its data starts at 0x7f0000000008, not 16-byte aligned",
           "ValueError: pass out=: outputs are allocated with torch or CuPy only (the inputs are DLFake)"})
    EXPECT_NE(out.find(expected), std::string::npos) << "missing: " << expected << "\n" << out;
  EXPECT_EQ(out.find("not refused"), std::string::npos) << out;
}

// torch tensors take a fast path once a call of the same dtypes, shapes, strides and devices passed
// every check: only the pointers' alignment is checked again. Shown with a stand-in torch module
// (what the runtime reads of a tensor) and a stand-in entry point that records its launches (CI has
// no GPU): the first call goes through the checks and is remembered, the second launches without
// them, a misaligned one goes back through them and is refused by name, another shape is checked
// anew, and the output is allocated where none is given.
TEST_F(PythonExport, TorchCallsCheckedOnceTakeTheFastPathAndStillRefuseMisalignment) {
  auto r = soltune("export --kb " + q(kb_) + " --problem softmax --format python --name tuned --allow-predicted -o " +
                   q(tmp_ / "pkg"));
  ASSERT_EQ(r.code, 0) << r;
  write(tmp_ / "torch.py", R"(
class _DType:
    def __init__(self, name): self.name = name
    def __str__(self): return "torch." + self.name
float32, float16 = _DType("float32"), _DType("float16")
class Tensor:
    def __init__(self, shape, dtype=float32, ptr=0x7f0000000000, device=0):
        self.shape, self.dtype, self.ptr, self.dev = tuple(shape), dtype, ptr, device
        self.is_cuda, self.device = device >= 0, "cuda:%d" % device
    def get_device(self): return self.dev
    def data_ptr(self): return self.ptr
    def stride(self):
        out, step = [], 1
        for d in reversed(self.shape):
            out.insert(0, step)
            step *= d
        return tuple(out)
allocated = []
def empty(dims, dtype=None, device=None):
    allocated.append(tuple(dims))
    return Tensor(dims, dtype, 0x7f0000800000)
class _C:
    @staticmethod
    def _cuda_getCurrentRawStream(device): return 0
class library:  # no register_fake: the package registers no custom op
    pass
)");
  r = python(R"(
import torch, tuned
rt = sys.modules["tuned"]
launches = []
class Entry:
    def __call__(self, device, ptrs, sizes, stream):
        launches.append((ptrs[0], ptrs[1], sizes[0], sizes[1]))
        return 0
class Lib:
    def __getattr__(self, name):
        setattr(self, name, Entry())
        return getattr(self, name)
rt._lib = Lib()
checked = [0]
bind = rt._Problem.bind
def counting_bind(self, *a):
    checked[0] += 1
    return bind(self, *a)
rt._Problem.bind = counting_bind
x, y = torch.Tensor((4, 8)), torch.Tensor((4, 8), ptr=0x7f0000100000)
print("first", tuned.softmax(x, out=y) is y, checked[0], len(launches))
print("again", tuned.softmax(x, out=y) is y, checked[0], len(launches))
try:
    tuned.softmax(torch.Tensor((4, 8), ptr=0x7f0000000004), out=y)
    print("misaligned not refused")
except ValueError as e:
    print("misaligned", e, checked[0], len(launches))
print("other shape", tuned.softmax(torch.Tensor((2, 8)), out=torch.Tensor((2, 8), ptr=0x7f0000200000)).shape, checked[0], len(launches))
try:
    tuned.softmax(torch.Tensor((4, 8), dtype=torch.float16), out=y)
    print("wrong dtype not refused")
except ValueError as e:
    print("wrong dtype", e, checked[0])
z = tuned.softmax(x)
print("allocated", z.shape, torch.allocated, checked[0], len(launches))
z = tuned.softmax(x)
print("allocated again", torch.allocated, checked[0], len(launches), launches[-1])
)");
  ASSERT_EQ(r.code, 0) << r << read(tmp_ / "stderr.txt");
  const std::string out = read(tmp_ / "stdout.txt");
  for (const char* expected : {
           "first True 1 1", "again True 1 2",
           "misaligned x: its data starts at 0x7f0000000004, not 16-byte aligned 2 2",
           "other shape (2, 8) 3 3", "wrong dtype x: dtype f16", "allocated (4, 8) [(4, 8)] 5 4",
           "allocated again [(4, 8), (4, 8)] 5 5 (139637976727552, 139637985116160, 4, 8)"})
    EXPECT_NE(out.find(expected), std::string::npos) << "missing: " << expected << "\n" << out;
}

// Every problem of a package is a custom op of its own (torch.ops.soltune.<problem>): its fake,
// which torch.compile traces through, gives that problem's output shapes whichever problem was
// registered last, with the tensors passed by position or by name. Shown with a stand-in
// torch.library that keeps what the package registers.
TEST_F(PythonExport, EachCustomOpTracesItsOwnProblem) {
  auto r = soltune("export --kb " + q(kb_) + " --problem softmax --problem l1norm --format python --name two --allow-predicted -o " +
                   q(tmp_ / "pkg"));
  ASSERT_EQ(r.code, 0) << r;
  write(tmp_ / "torch.py", kStandInTorch);
  r = python(R"(
import torch, two
x = torch.Tensor((4, 8))
print("softmax", torch.fakes["soltune::softmax"](x).shape, torch.fakes["soltune::softmax"](x=x).shape)
print("l1norm", torch.fakes["soltune::l1norm"](torch.Tensor((32,))).shape)
)");
  ASSERT_EQ(r.code, 0) << r << read(tmp_ / "stderr.txt");
  const std::string out = read(tmp_ / "stdout.txt");
  for (const char* expected : {"softmax (4, 8) (4, 8)", "l1norm (1,)"})
    EXPECT_NE(out.find(expected), std::string::npos) << "missing: " << expected << "\n" << out;
}

// A problem with two outputs of different dtypes and a size with a default (attention: O in the
// inputs' dtype, the log-sum-exp in f32; causal 0 unless given): the fake gives each output its own
// dtype and takes the default where the call leaves the size out, as the eager call does.
TEST_F(PythonExport, AFakeTakesEachOutputsDtypeAndTheSizesDefaults) {
  auto r = soltune("tune " + q(kSource / "configs" / "attention.yaml") + " --backend model --evals 2 --kb " + q(kb_) + " -q");
  ASSERT_EQ(r.code, 0) << r;
  r = soltune("export --kb " + q(kb_) + " --problem attention --format python --name att --build lazy --allow-predicted -o " +
              q(tmp_ / "pkg"));
  ASSERT_EQ(r.code, 0) << r;
  write(tmp_ / "torch.py", kStandInTorch);
  r = python(R"(
import torch, att
q, kv = torch.Tensor((2, 8, 100, 64), torch.bfloat16), torch.Tensor((2, 2, 300, 64), torch.bfloat16)
for given in ({}, {"causal": 1}):
    o, lse = torch.fakes["soltune::attention"](q, kv, kv, **given)
    print("attention", given, o.shape, o.dtype, lse.shape, lse.dtype)
)");
  ASSERT_EQ(r.code, 0) << r << read(tmp_ / "stderr.txt");
  const std::string out = read(tmp_ / "stdout.txt");
  for (const char* expected : {"attention {} (2, 8, 100, 64) bfloat16 (2, 8, 100) float32",
                               "attention {'causal': 1} (2, 8, 100, 64) bfloat16 (2, 8, 100) float32"})
    EXPECT_NE(out.find(expected), std::string::npos) << "missing: " << expected << "\n" << out;
}

// Built at the first import instead (--build lazy), with the command export recorded; bad options
// and a second problem for a one-problem format are refused with what was expected.
TEST_F(PythonExport, ALazyBuildHappensAtFirstUseAndBadOptionsAreRefused) {
  auto r = soltune("export --kb " + q(kb_) + " --problem softmax --format python --build lazy --allow-predicted -o " +
                   q(tmp_ / "pkg"));
  ASSERT_EQ(r.code, 0) << r;
  const auto so = tmp_ / "pkg" / "soltune_kernels" / "_kernels.so";
  EXPECT_FALSE(fs::exists(so));
  r = python(std::string("import soltune_kernels as k\n") + kFake + "refused(lambda: k.softmax(Fake((4, 8))))\n");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_TRUE(fs::exists(so));

  r = soltune("export --kb " + q(kb_) + " --problem softmax --problem l1norm -o x.cuh --allow-predicted");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_NE(r.err.find("--format cuh writes one problem"), std::string::npos) << r;
  r = soltune("export --kb " + q(kb_) + " --problem softmax --format python --name 9lives -o pkg --allow-predicted");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_NE(r.err.find("--name: a Python package name"), std::string::npos) << r;
  r = soltune("export --kb " + q(kb_) + " --problem softmax --format python --build later -o pkg --allow-predicted");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_NE(r.err.find("--build: expected now or lazy"), std::string::npos) << r;
}

}  // namespace
}  // namespace soltune
