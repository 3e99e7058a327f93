#pragma once

namespace tessera::layers {

/// Whether spatially split layers compute what needs no halo while their halos travel (the
/// model's "halo_overlap": true, false or "always").
enum class HaloOverlap {
  off,            // exchange first, then compute: only to measure the overlap
  where_it_pays,  // each layer decides (HaloOverlappedConv::pays_off): the default
  always,         // every layer that has outputs needing no halo, even tiny ones (tests, measurements)
};

}  // namespace tessera::layers
