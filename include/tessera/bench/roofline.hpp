#pragma once

namespace tessera::bench {

/// The roofline bound of an op: the least time in which a machine of `gflops` arithmetic and
/// `gbs` memory bandwidth can do `flops` and move `bytes`, i.e. the op's work over
/// min(peak, arithmetic intensity × bandwidth).
double roofline_seconds(double flops, double bytes, double gflops, double gbs);
/// True when the bandwidth, not the arithmetic, bounds the op.
bool memory_bound(double flops, double bytes, double gflops, double gbs);
/// Architectural efficiency: the roofline bound over the measured time, in [0, 1] up to
/// measurement noise (an op whose data stays in cache may exceed the triad's bandwidth).
double architectural_efficiency(double seconds, double flops, double bytes, double gflops, double gbs);

}  // namespace tessera::bench
