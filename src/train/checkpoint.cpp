#include "tessera/train/checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/atomic_file.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/json_reader.hpp"

namespace tessera::train {
namespace {
constexpr char kMagic[8] = {'T', 'S', 'R', 'A', 'C', 'K', 'P', 'T'};
constexpr int kFormatVersion = 1;

uint64_t fnv1a(const std::vector<float>& data, uint64_t h = 0xcbf29ce484222325ull) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  for (size_t i = 0; i < data.size() * sizeof(float); ++i) {
    h ^= bytes[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

/// The header field `key` as a T, or an IoError naming the file and the field: a header is
/// input like any other, and a missing or mistyped field must not end in a bare json error.
template <class T>
T header_field(const nlohmann::json& header, const char* key, const std::string& path) {
  const auto it = header.find(key);
  bool ok = it != header.end();
  if constexpr (std::is_same_v<T, std::string>) {
    ok = ok && it->is_string();
  } else if constexpr (std::is_unsigned_v<T>) {
    ok = ok && it->is_number_unsigned();
  } else if constexpr (std::is_floating_point_v<T>) {
    ok = ok && it->is_number();
  } else {
    ok = ok && it->is_number_integer();
  }
  if (!ok) throw IoError(path + ": corrupt checkpoint header: field '" + key + "' is missing or not of its type");
  return it->get<T>();
}

/// A step count from the header, which indexes the data order: it must not be negative.
int64_t header_count(const nlohmann::json& header, const char* key, const std::string& path) {
  const auto v = header_field<int64_t>(header, key, path);
  if (v < 0) throw IoError(path + ": corrupt checkpoint header: field '" + key + "' is negative");
  return v;
}

/// A tensor's entry in the header: its name, and a shape that is a list of non-negative
/// integers, small enough that its element count does not overflow.
struct TensorEntry {
  std::string name;
  Shape shape;
};

TensorEntry header_tensor(const nlohmann::json& entry, size_t index, const std::string& path) {
  const std::string where = path + ": corrupt checkpoint header: tensor " + std::to_string(index);
  if (!entry.is_object()) throw IoError(where + " is not an object");
  std::string name = header_field<std::string>(entry, "name", path);
  const auto it = entry.find("shape");
  if (it == entry.end() || !it->is_array()) throw IoError(where + " has no shape list");
  std::vector<int64_t> dims;
  int64_t numel = 1;
  for (const auto& d : *it) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0 ||
        (d.get<int64_t>() > 0 && numel > std::numeric_limits<int32_t>::max() / d.get<int64_t>()))
      throw IoError(where + " has an impossible shape " + it->dump().substr(0, 80));
    dims.push_back(d.get<int64_t>());
    numel *= dims.back();
  }
  return {std::move(name), Shape(dims)};
}

/// One tensor of the file: this rank's tensor, and how the file's whole tensor relates to it.
/// A checkpoint holds whole parameters whatever the layout that wrote it, so a shard of a
/// channel-split layer is gathered on save and cut out again on load.
struct Block {
  std::string name;
  Tensor tensor;
  /// The parameters whose shards make up the tensor: the parameter itself, or for optimizer
  /// state laid out like the trainable values, every trainable parameter in order (empty:
  /// the tensor is the same on every rank).
  std::vector<const layers::Parameter*> parts;
  Shape whole;

  std::vector<float> gather() const {
    const auto local = tensor.to_host();
    if (parts.empty()) return local;
    std::vector<float> whole_data;
    size_t offset = 0;
    for (const auto* p : parts) {
      const auto n = static_cast<size_t>(p->shape.numel());
      const auto piece = p->shard.gather_whole(std::vector<float>(local.begin() + offset, local.begin() + offset + n));
      whole_data.insert(whole_data.end(), piece.begin(), piece.end());
      offset += n;
    }
    return whole_data;
  }
  std::vector<float> slice(const std::vector<float>& whole_data) const {
    if (parts.empty()) return whole_data;
    std::vector<float> local;
    size_t offset = 0;
    for (const auto* p : parts) {
      const auto n = static_cast<size_t>(p->shard.split() ? p->shard.whole.numel() : p->shape.numel());
      const auto piece =
          p->shard.slice_of(std::vector<float>(whole_data.begin() + offset, whole_data.begin() + offset + n));
      local.insert(local.end(), piece.begin(), piece.end());
      offset += n;
    }
    return local;
  }
};

std::vector<Block> blocks_of(const model::ParameterStore& params, optim::Optimizer& optimizer) {
  const bool sharded = params.has_shards();
  std::vector<Block> blocks;
  std::vector<const layers::Parameter*> trainable;
  int64_t whole_trainable = 0;
  for (const auto& p : params.all()) {
    Block b{(p->trainable ? "param:" : "buffer:") + p->name, p->value, {}, p->value.shape()};
    if (p->shard.split()) {
      b.parts = {p.get()};
      b.whole = p->shard.whole;
    }
    if (p->trainable) {
      trainable.push_back(p.get());
      whole_trainable += b.whole.numel();
    }
    blocks.push_back(std::move(b));
  }
  for (auto& [name, t] : optimizer.state()) {
    Block b{"optimizer:" + name, t, {}, t.shape()};
    if (sharded && t.numel() == params.trainable_count()) {  // laid out like the values
      b.parts = trainable;
      b.whole = Shape{whole_trainable};
    }
    blocks.push_back(std::move(b));
  }
  return blocks;
}
}  // namespace

void save_checkpoint(const std::string& path, const model::ParameterStore& params, optim::Optimizer& optimizer,
                     const TrainingProgress& progress, bool write) {
  const auto blocks = blocks_of(params, optimizer);
  std::vector<std::vector<float>> host;
  uint64_t checksum = 0xcbf29ce484222325ull;
  nlohmann::json header;
  header["format"] = "tessera-checkpoint";
  header["version"] = kFormatVersion;
  header["step"] = progress.step;
  header["seed"] = progress.seed;
  if (progress.loss_scale > 0) {
    header["loss_scale"] = progress.loss_scale;
    header["loss_scale_good_steps"] = progress.good_steps;
  }
  header["optimizer"] = optimizer.type();
  header["optimizer_steps"] = optimizer.steps();
  header["tensors"] = nlohmann::json::array();
  for (const auto& b : blocks) {
    host.push_back(b.gather());
    checksum = fnv1a(host.back(), checksum);
    header["tensors"].push_back({{"name", b.name}, {"shape", b.whole.dims()}});
  }
  if (!write) return;
  header["checksum"] = checksum;
  const std::string text = header.dump();
  const uint64_t length = text.size();
  write_file_atomically(path, [&](std::FILE* f) {
    write_all(f, kMagic, sizeof kMagic, path);
    write_all(f, &length, sizeof length, path);
    write_all(f, text.data(), text.size(), path);
    for (const auto& h : host) write_all(f, h.data(), h.size() * sizeof(float), path);
  });
}

namespace {

/// The header of the checkpoint `in` reads, after its magic bytes and length, checked to be a
/// Tessera checkpoint of this format version. IoError naming `path` otherwise.
nlohmann::json read_header(std::ifstream& in, const std::string& path) {
  char magic[8];
  uint64_t length = 0;
  if (!in.read(magic, sizeof magic) || std::memcmp(magic, kMagic, sizeof magic) != 0)
    throw IoError(path + ": not a Tessera checkpoint (bad magic bytes)");
  if (!in.read(reinterpret_cast<char*>(&length), sizeof length) || length > (1u << 28))
    throw IoError(path + ": corrupt checkpoint header length");
  // The length is input: a damaged one must not size an allocation the file cannot fill.
  const std::streamoff header_start = in.tellg();
  in.seekg(0, std::ios::end);
  const std::streamoff file_size = in.tellg();
  in.seekg(header_start);
  if (header_start < 0 || file_size < header_start || length > static_cast<uint64_t>(file_size - header_start))
    throw IoError(path + ": corrupt checkpoint header length: " + std::to_string(length) +
                  " bytes, but the file holds " + std::to_string(file_size - header_start) + " after it");
  std::string text(length, '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(length)))
    throw IoError(path + ": truncated checkpoint header");
  nlohmann::json header;
  try {
    header = parse_json_text(text, "checkpoint header");
  } catch (const ConfigError& e) {
    throw IoError(path + ": corrupt checkpoint header: " + e.what());
  }
  if (!header.is_object()) throw IoError(path + ": corrupt checkpoint header: not a JSON object");
  // Looked up by hand: json::value() throws a bare type_error when a key holds another type.
  const auto format = header.find("format");
  const auto version = header.find("version");
  if (format == header.end() || !format->is_string() || *format != "tessera-checkpoint" || version == header.end() ||
      !version->is_number_integer() || *version != kFormatVersion)
    throw IoError(path + ": unsupported checkpoint format or version");
  return header;
}

/// The tensors after the header, their checksum the header's and every value finite. With
/// `blocks`, one per block in the same order and shapes, and returned; without (a check of the
/// file alone, verify_checkpoint), each is read, checked and dropped.
std::vector<std::vector<float>> read_payload(std::ifstream& in, const nlohmann::json& header,
                                             const std::vector<Block>* blocks, const std::string& path) {
  const auto checksum_written = header_field<uint64_t>(header, "checksum", path);
  const auto it = header.find("tensors");
  if (it == header.end() || !it->is_array()) throw IoError(path + ": corrupt checkpoint header: no tensor list");
  const auto& tensors = *it;
  if (blocks && tensors.size() != blocks->size())
    throw Error(path + ": checkpoint holds " + std::to_string(tensors.size()) +
                " tensors, this model and optimizer have " + std::to_string(blocks->size()) + " (a different model?)");
  std::vector<std::vector<float>> host;
  std::vector<float> data;
  std::string first_not_finite;  // reported after the checksum, which names a damaged file first
  uint64_t checksum = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto [name, shape] = header_tensor(tensors[i], i, path);
    if (blocks && (name != (*blocks)[i].name || shape != (*blocks)[i].whole))
      throw Error(path + ": checkpoint tensor " + std::to_string(i) + " is '" + name + "' " + shape.str() +
                  ", the model expects '" + (*blocks)[i].name + "' " + (*blocks)[i].whole.str());
    data.resize(static_cast<size_t>(shape.numel()));
    if (!in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(float))))
      throw IoError(path + ": truncated checkpoint (payload of '" + name + "' is incomplete)");
    checksum = fnv1a(data, checksum);
    // Training never writes a diverged state (it stops first), so a NaN or infinity here means
    // a damaged or foreign file, which would otherwise train on as NaN without a word.
    if (first_not_finite.empty() && !std::all_of(data.begin(), data.end(), [](float v) { return std::isfinite(v); }))
      first_not_finite = name;
    if (blocks) host.push_back(std::move(data));
  }
  if (in.peek() != std::char_traits<char>::eof()) throw IoError(path + ": trailing bytes after the checkpoint payload");
  if (checksum != checksum_written) throw IoError(path + ": checksum mismatch: the checkpoint payload is corrupt");
  if (!first_not_finite.empty())
    throw IoError(path + ": tensor '" + first_not_finite + "' holds NaN or infinite values");
  return host;
}

}  // namespace

TrainingProgress verify_checkpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path + ": cannot open the checkpoint for reading");
  const nlohmann::json header = read_header(in, path);
  TrainingProgress progress;
  progress.step = header_count(header, "step", path);
  progress.seed = header_field<uint64_t>(header, "seed", path);
  read_payload(in, header, nullptr, path);
  return progress;
}

TrainingProgress load_checkpoint(const std::string& path, model::ParameterStore& params, optim::Optimizer& optimizer) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path + ": cannot open the checkpoint for reading");
  const nlohmann::json header = read_header(in, path);
  const auto written_with = header_field<std::string>(header, "optimizer", path);
  if (written_with != optimizer.type())
    throw Error(path + ": checkpoint was written with optimizer '" + written_with + "', this run uses '" +
                optimizer.type() + "'");
  TrainingProgress progress;
  progress.step = header_count(header, "step", path);
  progress.seed = header_field<uint64_t>(header, "seed", path);
  if (header.contains("loss_scale")) {
    progress.loss_scale = header_field<double>(header, "loss_scale", path);
    progress.good_steps = header_count(header, "loss_scale_good_steps", path);
  }
  const int64_t optimizer_steps = header_count(header, "optimizer_steps", path);
  const auto blocks = blocks_of(params, optimizer);
  const auto host = read_payload(in, header, &blocks, path);
  // Only now, with everything read and verified, overwrite the live tensors.
  for (size_t i = 0; i < blocks.size(); ++i) {
    Tensor t = blocks[i].tensor;
    t.copy_from_host(blocks[i].slice(host[i]));
  }
  optimizer.set_steps(optimizer_steps);
  return progress;
}

}  // namespace tessera::train
