#pragma once
#include "tessera/model/graph.hpp"

namespace tessera::model {

/// Sets the alignment of every spatial extent of `graph` (its SpatialAlignment, which all its
/// grids hold) so that the blocks of each rank line up through every layer split in space
/// when the ranks do not divide an extent.
///
/// Each layer with a sliding window of stride s that splits an axis ties the extent its window
/// reads (A) to the one it writes (B): A is cut in units s times as wide as B's, so that every
/// input block starts at s times where its output block starts (a transposed convolution
/// reads its output through the window: its output is A). Extents tied together form chains
/// (a CosmoFlow's 128 → 64 → … over pooling, a U-Net's down and up paths), whose alignments
/// are the smallest whole numbers that keep every tie (the narrowest extent of a chain of
/// pooling gets 1, each wider one the product of the strides below it). Layers that
/// do not split an axis tie nothing, so an alignment grows only with the strided layers that
/// are split: the fewer, the more even the blocks. Throws ConfigError naming the layer where
/// two layers tie the same extents by different strides.
void align_spatial_splits(Graph& graph);

}  // namespace tessera::model
