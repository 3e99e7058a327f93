#pragma once
// Scores of an instance segmentation (one object id per voxel) against the true objects, as
// connectomics reports them (Januszewski et al. 2018; the SNEMI3D and CREMI challenges).
#include <cstdint>
#include <vector>

namespace tessera::eval {

/// An instance labelling: one id per voxel, in any order shared with its partner.
using Labels = std::vector<uint32_t>;

/// How one segmentation `found` differs from the truth `truth`, over the voxels whose true id
/// is not 0 (0 = no object, e.g. membrane: where a segmentation puts those voxels is not
/// scored). In `found`, 0 (left unsegmented) is one segment like any other, so leaving voxels
/// out costs as merging them would.
///  - Variation of information (Meilă 2007), in bits: split = H(found | truth), the entropy left
///    in the segment ids once the true object is known (objects cut into pieces); merge =
///    H(truth | found) (objects fused). vi = split + merge; 0 for a perfect segmentation.
///  - Adapted Rand error (Arganda-Carreras et al. 2015, as scikit-image's adapted_rand_error):
///    over pairs of distinct voxels, precision = pairs together in both / pairs together in
///    `found`, recall = pairs together in both / pairs together in `truth`, and
///    error = 1 − 2PR/(P + R). A side with no pair together scores 1 on its ratio (nothing to
///    get wrong); no shared pair at all gives an error of 1.
struct SegmentationScores {
  double vi_split = 0, vi_merge = 0;
  double rand_error = 0, rand_precision = 0, rand_recall = 0;
  int64_t voxels = 0;           // scored voxels (true id not 0)
  int64_t true_objects = 0;     // distinct non-zero true ids among them
  int64_t found_segments = 0;   // distinct found ids over the scored voxels
  double vi() const { return vi_split + vi_merge; }
};

/// Throws Error when the two differ in size or no voxel has a true object.
SegmentationScores score_segmentation(const Labels& truth, const Labels& found);

/// Object ids as a data file stores them, read as doubles (io::SampleArray's values), into
/// `ids`; returns the index of the first value that is not an id (a whole number in
/// [0, 2^32)), or −1 when all are, so that each reader names its own file in the error.
int64_t labels_from_values(const std::vector<double>& values, Labels& ids);

}  // namespace tessera::eval
