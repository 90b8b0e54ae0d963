#pragma once
// The columns of the gpus and runs tables, each beside where it lives in the record.
#include <vector>

#include "kb/columns.hpp"
#include "kb/records.hpp"

namespace soltune::kb {

// A GPU's row: its identity (name, uuid, kind), then every field of DeviceInfo's list, the
// datasheet's and the measured ceilings' figures each as <which>_<figure>, and the database's own.
const std::vector<Column<GpuRecord>>& gpu_columns();
inline constexpr const char* kGpuIdentity[] = {"name", "uuid", "kind"};

// A run's row: what begin_run writes from its RunInfo, then what the run's end and notes set.
// gpu_id is written by begin_run apart (it must name a GPU row).
const std::vector<Column<RunRecord>>& run_columns();

// A task's baseline: the task, T_ref and T_SOL with what they rest on, and the baseline's timing
// (each Timing figure as ref_<figure>). run_id is written apart (it must name a run).
const std::vector<Column<BaselineRecord>>& baseline_columns();

}  // namespace soltune::kb
