#include "tessera/io/hdf5_dataset.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>

#include "tessera/core/error.hpp"

namespace tessera::io {

Hdf5Dataset::Hdf5Dataset(std::shared_ptr<const Hdf5Layout> layout, std::vector<int64_t> samples, const Options& options)
    : layout_(std::move(layout)),
      samples_(std::move(samples)),
      options_(options),
      reader_(layout_),
      store_(options.store_bytes) {
  if (samples_.empty()) {
    samples_.resize(static_cast<size_t>(layout_->size()));
    std::iota(samples_.begin(), samples_.end(), 0);
  }
  for (const int64_t s : samples_)
    if (s < 0 || s >= layout_->size())
      throw Error(options_.name + ": sample " + std::to_string(s) + " is not in the data set of " +
                  std::to_string(layout_->size()) + " samples");
  const SampleSchema& schema = layout_->schema();
  input_coefficients_ =
      DeviceCoefficients::of(options_.normalization.coefficients(schema.channels(), options_.where + ".normalize"));
  target_coefficients_ = DeviceCoefficients::of({1.0f, 0.0f});
}

Hdf5Dataset::~Hdf5Dataset() { prefetcher_.discard(); }  // jobs use the members below

std::string Hdf5Dataset::describe() const {
  return options_.name + ": " + std::to_string(size()) + " samples from " + layout_->source() + "; " +
         layout_->schema().str() + "; normalisation " + options_.normalization.str() +
         (options_.prefetch ? "; prefetch on" : "; prefetch off") + ", store " +
         std::to_string(options_.store_bytes >> 20) + " MiB";
}

void Hdf5Dataset::check(const std::vector<int64_t>& indices, const parallel::Box& box) const {
  layout_->schema().check_box(box, options_.name);
  for (const int64_t index : indices)
    if (index < 0 || index >= size())
      throw Error(options_.name + ": sample index " + std::to_string(index) + " out of range [0, " +
                  std::to_string(size()) + ")");
}

Hdf5Dataset::Staging& Hdf5Dataset::stage_for(const Request& request, bool floats) {
  Staging* staging = nullptr;
  for (auto& s : staging_)
    if (!s->busy) staging = s.get();
  if (!staging) {
    staging_.push_back(std::make_unique<Staging>());
    staging = staging_.back().get();
  }
  const SampleSchema& schema = layout_->schema();
  const auto n = static_cast<int64_t>(request.indices.size());
  const auto bytes = static_cast<size_t>(n * (schema.input_bytes(request.box) + schema.target_bytes(request.box)));
  if (staging->bytes.extent(0) < bytes)
    staging->bytes = Kokkos::View<unsigned char*, HostSpace>("tessera::hdf5_staged", bytes);
  const auto values = static_cast<size_t>(n * (schema.input_values(request.box) + schema.target_values(request.box)));
  if (floats && staging->floats.extent(0) < values)
    staging->floats = Kokkos::View<float*, HostSpace>("tessera::hdf5_staged_floats", values);
  staging->busy = true;
  return *staging;
}

void Hdf5Dataset::read(const Request& request, Staging& staging, bool to_floats) {
  const auto start = std::chrono::steady_clock::now();
  const SampleSchema& schema = layout_->schema();
  const int64_t in_bytes = schema.input_bytes(request.box), target_bytes = schema.target_bytes(request.box);
  const auto n = static_cast<int64_t>(request.indices.size());
  store_.reset_for(request.box, in_bytes, target_bytes);
  // Inputs of all rows first, then targets of all rows: each converts in one pass.
  unsigned char* inputs = staging.bytes.data();
  unsigned char* targets = inputs + n * in_bytes;
  for (int64_t row = 0; row < n; ++row) {
    const int64_t sample = samples_[static_cast<size_t>(request.indices[static_cast<size_t>(row)])];
    unsigned char* in = inputs + row * in_bytes;
    unsigned char* target = targets + row * target_bytes;
    if (const unsigned char* stored = store_.find(sample)) {
      std::memcpy(in, stored, static_cast<size_t>(in_bytes));
      std::memcpy(target, stored + in_bytes, static_cast<size_t>(target_bytes));
      ++store_reads_;
      continue;
    }
    reader_.read(sample, request.box, in, target);
    ++file_reads_;
    file_bytes_ += in_bytes + target_bytes;
    store_.insert(sample, in, target);
  }
  if (to_floats) {
    const int64_t in_values = n * schema.input_values(request.box);
    float* floats = staging.floats.data();
    if (convert_values_on_host(inputs, schema.input_type, in_values, options_.normalization.transform,
                               input_coefficients_, floats) >= 0)
      refuse_non_finite(request, true, floats, in_values / n);
    const int64_t target_values = n * schema.target_values(request.box);
    if (convert_values_on_host(targets, schema.target_type, target_values, Normalization::Transform::none,
                               target_coefficients_, floats + in_values) >= 0)
      refuse_non_finite(request, false, floats + in_values, target_values / n);
  }
  read_nanoseconds_ +=
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
}

void Hdf5Dataset::refuse_non_finite(const Request& request, bool inputs, const float* values, int64_t per_row) const {
  auto bad = [](float y) {
    const float z = y - y;
    return z != z;
  };
  size_t row = 0;
  for (size_t i = 0;; ++i)
    if (bad(values[i])) {
      row = i / static_cast<size_t>(per_row);
      break;
    }
  int64_t count = 0;
  for (int64_t j = 0; j < per_row; ++j)
    count += bad(values[row * static_cast<size_t>(per_row) + static_cast<size_t>(j)]);
  const int64_t sample = samples_[static_cast<size_t>(request.indices[row])];
  const auto [file, position] = layout_->locate(sample);
  throw IoError(layout_->files()[file].path + ": dataset '" +
                (inputs ? layout_->names().inputs : layout_->names().targets) + "': sample " +
                std::to_string(position) + " of the file has " + std::to_string(count) +
                " value(s) that are not finite" +
                (inputs && options_.normalization.transform == Normalization::Transform::log1p
                     ? " after normalisation (NaN or Inf in the file, or log1p of a value <= -1)"
                     : " (NaN or Inf in the file)"));
}

void Hdf5Dataset::convert(const Request& request, const Staging& staging, const Tensor& inputs, const Tensor& targets) {
  const auto start = std::chrono::steady_clock::now();
  const SampleSchema& schema = layout_->schema();
  const auto n = static_cast<int64_t>(request.indices.size());
  const int64_t in_bytes = schema.input_bytes(request.box), target_bytes = schema.target_bytes(request.box);
  const auto total = static_cast<size_t>(n * (in_bytes + target_bytes));
  const unsigned char* bytes = staging.bytes.data();
  if constexpr (!Kokkos::SpaceAccessibility<ExecSpace, HostSpace>::accessible) {
    if (device_staged_.extent(0) < total)
      device_staged_ = Kokkos::View<unsigned char*, MemSpace>("tessera::hdf5_staged_device", total);
    Kokkos::deep_copy(Kokkos::subview(device_staged_, std::pair<size_t, size_t>(0, total)),
                      Kokkos::subview(staging.bytes, std::pair<size_t, size_t>(0, total)));
    bytes = device_staged_.data();
  }
  const int64_t in_values = n * schema.input_values(request.box), target_values = n * schema.target_values(request.box);
  const int64_t bad_inputs = convert_values(bytes, schema.input_type, in_values, options_.normalization.transform,
                                            input_coefficients_, inputs.view(), 0);
  const int64_t bad_targets = convert_values(bytes + n * in_bytes, schema.target_type, target_values,
                                             Normalization::Transform::none, target_coefficients_, targets.view(), 0);
  convert_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (bad_inputs == 0 && bad_targets == 0) return;
  const bool in_inputs = bad_inputs > 0;
  const auto values = static_cast<size_t>(in_inputs ? in_values : target_values);
  std::vector<float> host(values);
  Kokkos::deep_copy(Kokkos::View<float*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(host.data(), values),
                    Kokkos::subview((in_inputs ? inputs : targets).view(), std::pair<size_t, size_t>(0, values)));
  refuse_non_finite(request, in_inputs, host.data(), static_cast<int64_t>(values) / n);
}

void Hdf5Dataset::deliver(const Request& request, const Staging& staging, const Tensor& inputs, const Tensor& targets) {
  const auto start = std::chrono::steady_clock::now();
  const SampleSchema& schema = layout_->schema();
  const auto n = static_cast<int64_t>(request.indices.size());
  const auto in_values = static_cast<size_t>(n * schema.input_values(request.box));
  const auto target_values = static_cast<size_t>(n * schema.target_values(request.box));
  Kokkos::deep_copy(Kokkos::subview(inputs.view(), std::pair<size_t, size_t>(0, in_values)),
                    Kokkos::subview(staging.floats, std::pair<size_t, size_t>(0, in_values)));
  Kokkos::deep_copy(Kokkos::subview(targets.view(), std::pair<size_t, size_t>(0, target_values)),
                    Kokkos::subview(staging.floats, std::pair<size_t, size_t>(in_values, in_values + target_values)));
  convert_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

namespace {

/// Runs `work`, adding its wall time in seconds to `total`.
template <typename Work>
void timed(double& total, Work&& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

bool Hdf5Dataset::read_directly(const Request& request, const Tensor& inputs, const Tensor& targets) {
  const SampleSchema& schema = layout_->schema();
  const parallel::Box& box = request.box;
  const int64_t in_bytes = schema.input_bytes(box), target_bytes = schema.target_bytes(box);
  const int64_t in_values = schema.input_values(box), target_values = schema.target_values(box);
  if (slab_targets_.size() < static_cast<size_t>(target_bytes)) slab_targets_.resize(static_cast<size_t>(target_bytes));
  store_.reset_for(box, in_bytes, target_bytes);
  DirectTimes times;
  int64_t bad = 0;
  for (size_t row = 0; row < request.indices.size(); ++row) {
    const int64_t sample = samples_[static_cast<size_t>(request.indices[row])];
    const auto first_in = static_cast<int64_t>(row) * in_values,
               first_target = static_cast<int64_t>(row) * target_values;
    if (const unsigned char* stored = store_.find(sample)) {
      timed(times.convert_s, [&] {
        bad += convert_values(stored, schema.input_type, in_values, options_.normalization.transform,
                              input_coefficients_, inputs.view(), first_in);
        bad += convert_values(stored + in_bytes, schema.target_type, target_values, Normalization::Transform::none,
                              target_coefficients_, targets.view(), first_target);
      });
      ++store_reads_;
      continue;
    }
    unsigned char* keep = store_.add(sample);  // filled as it is read, when the store has room
    try {
      bad += read_from_file(sample, box, keep, first_in, first_target, inputs, targets, times);
    } catch (...) {
      if (keep) store_.remove(sample);  // never keep half a sample
      throw;
    }
    ++file_reads_;
    file_bytes_ += in_bytes + target_bytes;
  }
  read_nanoseconds_ += static_cast<int64_t>(times.read_s * 1e9);
  convert_seconds_ += times.convert_s;
  return bad == 0;
}

int64_t Hdf5Dataset::read_from_file(int64_t sample, const parallel::Box& box, unsigned char* keep, int64_t first_in,
                                    int64_t first_target, const Tensor& inputs, const Tensor& targets,
                                    DirectTimes& times) {
  const SampleSchema& schema = layout_->schema();
  const int64_t plane_values = box.extent[1] * box.extent[2] * schema.channels();
  const int64_t plane_bytes = plane_values * element_size(schema.input_type);
  // Slabs of depth planes of at most 4 MiB (a whole 64³ sample of int16 counts is 2 MiB): read
  // into a buffer that stays in cache and converted from there, in few enough kernels that
  // their launches cost nothing.
  const int64_t planes = std::max<int64_t>(1, std::min<int64_t>(box.extent[0], (int64_t{1} << 22) / plane_bytes));
  if (slab_.size() < static_cast<size_t>(planes * plane_bytes)) slab_.resize(static_cast<size_t>(planes * plane_bytes));
  int64_t bad = 0;
  for (int64_t d = 0; d < box.extent[0]; d += planes) {
    parallel::Box slab = box;
    slab.offset[0] += d;
    slab.extent[0] = std::min(planes, box.extent[0] - d);
    unsigned char* bytes = keep ? keep + d * plane_bytes : slab_.data();
    timed(times.read_s, [&] { reader_.read_inputs(sample, slab, bytes); });
    timed(times.convert_s, [&] {
      bad += convert_values(bytes, schema.input_type, slab.extent[0] * plane_values, options_.normalization.transform,
                            input_coefficients_, inputs.view(), first_in + d * plane_values);
    });
  }
  unsigned char* bytes = keep ? keep + schema.input_bytes(box) : slab_targets_.data();
  timed(times.read_s, [&] { reader_.read_targets(sample, box, bytes); });
  timed(times.convert_s, [&] {
    bad += convert_values(bytes, schema.target_type, schema.target_values(box), Normalization::Transform::none,
                          target_coefficients_, targets.view(), first_target);
  });
  return bad;
}

void Hdf5Dataset::claim_oldest(bool rethrow) {
  Staging* staging = pending_.front().staging;
  pending_.pop_front();
  try {
    wait_seconds_ += prefetcher_.wait(rethrow);
  } catch (...) {
    staging->busy = false;  // a failed read is retried by the next load that asks for it
    throw;
  }
  if (!rethrow) staging->busy = false;
}

void Hdf5Dataset::load(const std::vector<int64_t>& indices, const parallel::Box& box, const Tensor& inputs,
                       const Tensor& targets) {
  check(indices, box);
  const SampleSchema& schema = layout_->schema();
  const auto n = static_cast<int64_t>(indices.size());
  check_load_arguments(options_.name, {schema.input[0], schema.input[1], schema.input[2]}, box, n, inputs,
                       schema.channels(), targets, schema.target_values(box));
  const Request request{indices, box};
  ++loads_;
  bool ahead = false;
  for (const auto& p : pending_) ahead = ahead || p.request == request;
  if (ahead) {
    while (!(pending_.front().request == request)) claim_oldest(false);  // skipped: nobody wants them
    Staging& staging = *pending_.front().staging;
    claim_oldest(true);
    ++prefetched_loads_;
    if (convert_ahead())
      deliver(request, staging, inputs, targets);
    else
      convert(request, staging, inputs, targets);
    staging.busy = false;
    return;
  }
  while (!pending_.empty()) claim_oldest(false);
  if constexpr (Kokkos::SpaceAccessibility<ExecSpace, HostSpace>::accessible) {
    if (read_directly(request, inputs, targets)) return;
    // A value is not finite: the staged read below finds which and names its file.
  }
  Staging& staging = stage_for(request, false);
  try {
    read(request, staging, false);
    convert(request, staging, inputs, targets);
  } catch (...) {
    staging.busy = false;
    throw;
  }
  staging.busy = false;
}

void Hdf5Dataset::prefetch(const std::vector<int64_t>& indices, const parallel::Box& box) {
  if (!options_.prefetch) return;
  check(indices, box);
  const Request request{indices, box};
  for (const auto& p : pending_)
    if (p.request == request) return;
  if (pending_.size() >= read_ahead) claim_oldest(false);
  const bool floats = convert_ahead();
  Staging& staging = stage_for(request, floats);
  pending_.push_back({request, &staging});
  prefetcher_.start([this, request, &staging, floats] { read(request, staging, floats); });
}

Hdf5Dataset::Statistics Hdf5Dataset::statistics() const {
  Statistics s;
  s.loads = loads_;
  s.prefetched_loads = prefetched_loads_;
  s.file_reads = file_reads_;
  s.store_reads = store_reads_;
  s.file_bytes = file_bytes_;
  s.read_seconds = static_cast<double>(read_nanoseconds_.load()) * 1e-9;
  s.wait_seconds = wait_seconds_;
  s.convert_seconds = convert_seconds_;
  return s;
}

}  // namespace tessera::io
