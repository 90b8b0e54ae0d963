#pragma once
// The GPU worker: the only process that holds a CUDA context. It reads requests from `in` and
// answers on `out` (wire.hpp), one at a time:
//   hello {device, arch, templates, options}         -> {ok, device}
//   baseline {task}                                   -> {ok, baseline} | {ok: false, error}
//   run {task, key, lowered, res} + CUBIN frame       -> {ok, outcome, lost}
//   retime {task, rounds, items} + a CUBIN frame each -> {ok, baseline: [us], configs: [[us]]}
// After a fault it answers, then exits: the context is unusable and the tuner starts a new worker.
namespace soltune {

int worker_main(int in, int out);

}  // namespace soltune
