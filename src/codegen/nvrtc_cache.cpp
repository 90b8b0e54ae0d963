#include "codegen/nvrtc_cache.hpp"

#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <thread>

#include "core/error.hpp"

namespace soltune {
namespace {

constexpr char kMagic[8] = {'S', 'O', 'L', 'N', 'V', 'R', 'T', 'C'};
constexpr uint32_t kFormat = 2;  // 2: ptxas notes per kernel
constexpr size_t kHeader = sizeof(kMagic) + 4 + 8 + 8;  // magic, format, payload length, checksum

// --- hashing ---

struct Hasher {
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> st{XXH3_createState(), &XXH3_freeState};
  Hasher() {
    if (!st || XXH3_128bits_reset(st.get()) != XXH_OK) throw Error("XXH3: cannot create hash state");
  }
  void raw(const void* p, size_t n) {
    if (XXH3_128bits_update(st.get(), p, n) != XXH_OK) throw Error("XXH3_128bits_update failed");
  }
  // Length first, so ("ab","c") and ("a","bc") hash differently.
  void field(std::string_view s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  void u64(uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
    raw(b, 8);
  }
  std::string hex() {
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st.get()));
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (unsigned char b : c.digest) {
      s += digits[b >> 4];
      s += digits[b & 15];
    }
    return s;
  }
};

// --- entry encoding: little-endian integers, length-prefixed strings ---

struct Writer {
  std::string out;
  void u8(uint8_t v) { out += static_cast<char>(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out += static_cast<char>(v >> (8 * i));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out += static_cast<char>(v >> (8 * i));
  }
  void i32(int v) { u32(static_cast<uint32_t>(v)); }
  void str(std::string_view s) {
    u64(s.size());
    out.append(s);
  }
};

// Every read is bounds-checked; the first failure sticks, so decoding can check once at the end.
struct Reader {
  std::string_view in;
  bool ok = true;
  bool take(size_t n, std::string_view& s) {
    if (!ok || in.size() < n) return ok = false;
    s = in.substr(0, n);
    in.remove_prefix(n);
    return true;
  }
  uint64_t uint(size_t n) {
    std::string_view s;
    if (!take(n, s)) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t(static_cast<unsigned char>(s[i])) << (8 * i);
    return v;
  }
  uint8_t u8() { return static_cast<uint8_t>(uint(1)); }
  uint32_t u32() { return static_cast<uint32_t>(uint(4)); }
  uint64_t u64() { return uint(8); }
  int i32() { return static_cast<int>(u32()); }
  std::string str() {
    const uint64_t n = u64();
    std::string_view s;
    if (n > in.size() || !take(static_cast<size_t>(n), s)) return ok = false, std::string();
    return std::string(s);
  }
};

uint64_t checksum(std::string_view s) { return XXH3_64bits(s.data(), s.size()); }

std::string temp_name(const std::string& key) {
  static std::atomic<uint64_t> counter{0};
  return ".tmp." + key + "." + std::to_string(::getpid()) + "." +
         std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "." +
         std::to_string(counter++);
}

}  // namespace

std::string nvrtc_cache_key(const CompileRequest& r, const std::vector<std::string>& options,
                            int nvrtc_version) {
  Hasher h;
  h.field("soltune-nvrtc-cache/1");  // bump with anything that changes what a key stands for
  h.u64(static_cast<uint64_t>(nvrtc_version));
  h.field(r.arch);
  h.field(r.source_name);  // appears in the log and, with -lineinfo, in the CUBIN
  h.field(r.source);
  h.u64(r.name_expressions.size());
  for (const auto& n : r.name_expressions) h.field(n);
  h.u64(options.size());  // the full list, arch and include dirs included
  for (const auto& o : options) h.field(o);
  return h.hex();
}

std::string encode_cache_entry(const CompileResult& res) {
  Writer p;
  p.str(res.key);
  p.u8(res.ok ? 1 : 0);
  p.str(res.log);
  p.u32(static_cast<uint32_t>(res.kernels.size()));
  for (const auto& k : res.kernels) {
    p.str(k.name_expression);
    p.str(k.lowered_name);
    for (int v : {k.res.registers, k.res.spill_stores, k.res.spill_loads, k.res.stack, k.res.smem_static,
                  k.res.cmem})
      p.i32(v);
    p.u8(k.res.parsed ? 1 : 0);
    p.u32(static_cast<uint32_t>(k.res.notes.size()));
    for (const auto& n : k.res.notes) {
      p.u8(static_cast<uint8_t>(n.kind));
      p.i32(n.count);
      p.str(n.line);
    }
  }
  p.str(std::string_view(res.cubin.data(), res.cubin.size()));

  Writer w;
  w.out.append(kMagic, sizeof(kMagic));
  w.u32(kFormat);
  w.u64(p.out.size());
  w.u64(checksum(p.out));
  w.out += p.out;
  return std::move(w.out);
}

std::optional<CompileResult> decode_cache_entry(const std::string& bytes, const std::string& key) {
  if (bytes.size() < kHeader || std::string_view(bytes).substr(0, sizeof(kMagic)) !=
                                    std::string_view(kMagic, sizeof(kMagic)))
    return std::nullopt;
  Reader h{std::string_view(bytes).substr(sizeof(kMagic))};
  const uint32_t format = h.u32();
  const uint64_t len = h.u64();
  const uint64_t sum = h.u64();
  if (!h.ok || format != kFormat || len != bytes.size() - kHeader || sum != checksum(h.in))
    return std::nullopt;

  Reader r{h.in};
  CompileResult res;
  res.key = r.str();
  res.ok = r.u8() == 1;
  res.log = r.str();
  const uint32_t n = r.u32();
  if (!r.ok || n > r.in.size()) return std::nullopt;  // a kernel takes more than one byte
  for (uint32_t i = 0; i < n && r.ok; ++i) {
    CompiledKernel k;
    k.name_expression = r.str();
    k.lowered_name = r.str();
    k.res.registers = r.i32();
    k.res.spill_stores = r.i32();
    k.res.spill_loads = r.i32();
    k.res.stack = r.i32();
    k.res.smem_static = r.i32();
    k.res.cmem = r.i32();
    k.res.parsed = r.u8() == 1;
    const uint32_t notes = r.u32();
    if (notes > r.in.size()) return std::nullopt;
    for (uint32_t j = 0; j < notes && r.ok; ++j) {
      const uint8_t kind = r.u8();
      if (kind > static_cast<uint8_t>(PtxasNote::Kind::setmaxnreg_ignored)) return std::nullopt;
      PtxasNote note{static_cast<PtxasNote::Kind>(kind), {}, r.i32()};
      note.line = r.str();
      k.res.notes.push_back(std::move(note));
    }
    res.kernels.push_back(std::move(k));
  }
  const std::string cubin = r.str();
  if (!r.ok || !r.in.empty() || res.key != key) return std::nullopt;
  res.cubin.assign(cubin.begin(), cubin.end());
  return res;
}

NvrtcCache::NvrtcCache(std::filesystem::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec || !std::filesystem::is_directory(dir_, ec))
    disable("cannot create " + dir_.string() + (ec ? ": " + ec.message() : ""));
}

std::filesystem::path NvrtcCache::entry_path(const std::string& key) const {
  return dir_ / (key + ".nvrtc");
}

bool NvrtcCache::enabled() const {
  std::lock_guard lock(mu_);
  return !disabled_;
}

void NvrtcCache::disable(const std::string& why) {
  std::lock_guard lock(mu_);
  if (disabled_) return;
  disabled_ = true;
  note_ = "soltune: NVRTC disk cache disabled, compiling without it (" + why + ")";
}

std::string NvrtcCache::take_note() {
  std::lock_guard lock(mu_);
  if (!disabled_ || noted_) return {};
  noted_ = true;
  return note_;
}

std::optional<CompileResult> NvrtcCache::load(const std::string& key) const {
  if (!enabled()) return std::nullopt;
  std::ifstream f(entry_path(key), std::ios::binary);
  if (!f) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) return std::nullopt;
  return decode_cache_entry(bytes, key);
}

void NvrtcCache::store(const CompileResult& res) {
  if (!enabled()) return;
  try {
    const std::string bytes = encode_cache_entry(res);
    const std::filesystem::path tmp = dir_ / temp_name(res.key);
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (f) f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (f.is_open()) f.close();  // close() flushes: a full disk shows up here
    std::error_code ec;
    if (f) std::filesystem::rename(tmp, entry_path(res.key), ec);  // atomic replace
    if (!f || ec) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      disable("cannot write " + tmp.string() + (ec ? ": " + ec.message() : ""));
    }
  } catch (const std::exception& e) {  // e.g. bad_alloc from a huge entry: caching is optional
    disable(e.what());
  }
}

}  // namespace soltune
