#pragma once
// The machine a bench ran on, for the report's header: numbers mean little without the CPU they came from.
#include "bench/bench_report.h"

namespace minigen::bench {

// CPU model from /proc/cpuinfo ("unknown CPU" where it has none), cores, Highway's target, $OPENBLAS_CORETYPE.
SystemDescription describe_system();

}  // namespace minigen::bench
