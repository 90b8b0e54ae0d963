#pragma once
// A recorded search landscape: every legal configuration of one task measured on one GPU (soltune
// landscape, the exhaustive mode), with the space that defines legality and the task's baseline.
// The replay backend answers from it and bench-search compares strategies on it, without a GPU.
// Stored as JSON (docs/LANDSCAPES.md describes the fields).
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/task.hpp"

namespace soltune {

struct Landscape {
  std::filesystem::path file;
  std::string task_id;           // "gelu/vectorized/f32/n=16777216"
  std::string gpu, recorded, command, toolchain;
  std::string timing;            // the run config's timing: when not soltune's method ("gate off, ..."); "" otherwise
  TimeKind kind = TimeKind::measured;  // predicted: made with the model backend (tests), never a benchmark
  DType dtype = DType::f32;
  Shape shape;
  TaskBaseline baseline;         // T_ref, T_SOL, flops, bytes (kind: measured)
  ProblemSpec problem;           // name, sizes and dtypes, and one variant: its knobs and constraints
  Bindings fixed;                // sizes, dtype_bytes and the device symbols legality saw
  std::map<std::string, EvalResult> results;  // by canonical key: every legal configuration
  size_t legal = 0;              // legal configurations in the space; fewer results: a partial recording

  bool complete() const { return results.size() >= legal; }

  const VariantSpec& variant() const { return problem.variants.front(); }
  Task task() const { return Task{&problem, &problem.variants.front(), dtype, shape}; }
  // Whether the file carried its template's launch geometry and model hints (files from before
  // it did need the template itself for the model's prior).
  bool has_geometry() const;
  // The fastest correct configuration's time (ok results only).
  double best_us() const;
};

// Reads a landscape; every error names the file and what was expected. A partial one (a recording
// cut short, to be finished with `soltune landscape --resume`) is refused unless allow_partial.
Landscape load_landscape(const std::filesystem::path& file, bool allow_partial = false);
// Writes it (core/output_file.hpp: a regular file replaced whole, never in part).
void save_landscape(const Landscape& l, const std::filesystem::path& file);

}  // namespace soltune
