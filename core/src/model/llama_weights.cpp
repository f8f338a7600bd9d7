// llama_weights.cpp — see hwinfer/llama_weights.h: the GGUF data section imported (zero-copy) or
// uploaded as one buffer, and every tensor as an offset into it; or, for a data section larger
// than one allocation, one buffer per tensor.
#include "hwinfer/llama_weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <tuple>

#include "hwinfer/tensor_view.h"

namespace hwinfer {

namespace {

// Host-to-device uploads go in chunks of this many bytes.
constexpr uint64_t kUploadChunkBytes = 256ull << 20;

// Uploads |bytes| bytes from |src| into |dst| from byte 0.
Status Upload(Stream& stream, const uint8_t* src, const Buffer& dst, uint64_t bytes) {
  for (uint64_t done = 0; done < bytes; done += kUploadChunkBytes) {
    const uint64_t n = std::min(kUploadChunkBytes, bytes - done);
    HWINFER_RETURN_IF_ERROR(stream.CopyH2D(src + done, dst, done, n));
  }
  return Status::Ok();
}

DeviceTensor TensorAt(hwinfer_buffer* buffer, uint64_t offset_bytes, const GgufTensorInfo& info) {
  DeviceTensor t;
  t.buffer = buffer;
  t.offset_bytes = offset_bytes;
  t.dtype = info.ggml_type;
  const std::vector<int64_t> shape = info.RowMajorShape();
  t.rows = shape.size() == 2 ? shape[0] : 1;
  t.cols = shape.back();
  return t;
}

}  // namespace

hwinfer_tensor_view DeviceTensor::View() const {
  return ContiguousView(buffer, offset_bytes, dtype, {rows, cols});
}

hwinfer_tensor_view DeviceTensor::VectorView() const {
  return ContiguousView(buffer, offset_bytes, dtype, {rows * cols});
}

StatusOr<DeviceTensor> LlamaWeights::PlaceInOwnBuffer(const std::shared_ptr<Device>& device,
                                                      const GgufTensorInfo& info, Stream& stream) {
  auto found = tensor_buffers_.find(&info);
  if (found != tensor_buffers_.end()) return TensorAt(found->second.handle(), 0, info);
  const uint64_t max_bytes = device->info().max_allocation_bytes;
  if (info.size_bytes > max_bytes) {
    return OutOfMemory(fmt::format(
        "{}: tensor {} is {} bytes, more than {}'s largest single allocation of {} bytes (for "
        "Vulkan, maxStorageBufferRange / maxMemoryAllocationSize)",
        model_->file().name(), info.name, info.size_bytes, device->id(), max_bytes));
  }
  HWINFER_ASSIGN_OR_RETURN(Buffer buffer, device->Allocate(info.size_bytes));
  HWINFER_RETURN_IF_ERROR(
      UploadBounded(stream, model_->file().TensorData(info), buffer, info.size_bytes));
  hwinfer_buffer* handle = buffer.handle();
  tensor_buffers_.emplace(&info, std::move(buffer));
  return TensorAt(handle, 0, info);
}

Status LlamaWeights::UploadBounded(Stream& stream, const uint8_t* src, const Buffer& buffer,
                                   uint64_t bytes) {
  HWINFER_RETURN_IF_ERROR(Upload(stream, src, buffer, bytes));
  // The staging memory of the copies lives until the stream passes them: bound it.
  unsynchronized_bytes_ += bytes;
  if (unsynchronized_bytes_ >= kUploadChunkBytes) {
    HWINFER_RETURN_IF_ERROR(stream.Synchronize());
    unsynchronized_bytes_ = 0;
    shard_staging_.clear();
  }
  return Status::Ok();
}

StatusOr<DeviceTensor> LlamaWeights::PlaceShard(const std::shared_ptr<Device>& device,
                                                const GgufTensorInfo& info, bool by_rows,
                                                SliceRange slice, Stream& stream) {
  DeviceTensor part = TensorAt(nullptr, 0, info);
  uint64_t block_values = 0, block_bytes = 0;
  if (!GgmlTypeBlock(info.ggml_type, &block_values, &block_bytes)) {
    return Unsupported(fmt::format("{}: tensor {} has type {}, which cannot be split",
                                   model_->file().name(), info.name, info.ggml_type));
  }
  const uint64_t row_bytes = static_cast<uint64_t>(part.cols) / block_values * block_bytes;
  const uint8_t* data = model_->file().TensorData(info);
  // |bytes| bytes from |src| into a buffer of their own.
  auto upload = [&](const uint8_t* src, uint64_t bytes) -> StatusOr<DeviceTensor> {
    HWINFER_ASSIGN_OR_RETURN(Buffer buffer, device->Allocate(bytes));
    HWINFER_RETURN_IF_ERROR(UploadBounded(stream, src, buffer, bytes));
    part.buffer = buffer.handle();
    part.offset_bytes = 0;
    shard_buffers_.push_back(std::move(buffer));
    return part;
  };
  if (by_rows) {  // rows [first, first + count): contiguous, used or uploaded in place
    const uint64_t first = static_cast<uint64_t>(slice.first) * row_bytes;
    part.rows = slice.count;
    if (!imported_) return upload(data + first, static_cast<uint64_t>(part.rows) * row_bytes);
    part.buffer = data_.handle();
    part.offset_bytes = info.offset_bytes + first;
    return part;
  }
  // Columns [first, first + count) of every row (whole blocks: CheckWeightShards), gathered.
  const uint64_t first = static_cast<uint64_t>(slice.first) / block_values * block_bytes;
  const uint64_t part_bytes = static_cast<uint64_t>(slice.count) / block_values * block_bytes;
  std::vector<uint8_t> gathered(static_cast<size_t>(part.rows) * part_bytes);
  for (int64_t r = 0; r < part.rows; ++r) {
    std::memcpy(gathered.data() + static_cast<uint64_t>(r) * part_bytes,
                data + static_cast<uint64_t>(r) * row_bytes + first, part_bytes);
  }
  part.cols = slice.count;
  shard_staging_.push_back(std::move(gathered));  // alive until the upload is synchronised
  return upload(shard_staging_.back().data(), shard_staging_.back().size());
}

ShardSlices SlicesOfShard(const ModelShape& m, int64_t shard, int64_t shards) {
  const int64_t hd = m.head_dim(), heads = m.n_heads / shards, ffn = m.ffn_dim / shards;
  // KV heads: a share each, or, with more ranks than KV heads, the one its query heads use.
  const int64_t kv_heads = std::max<int64_t>(m.n_kv_heads / shards, 1);
  const int64_t first_kv = m.n_kv_heads >= shards
                               ? shard * kv_heads
                               : shard / (shards / std::max<int64_t>(m.n_kv_heads, 1));
  ShardSlices slices;
  slices.q = {shard * heads * hd, heads * hd};
  slices.kv = {first_kv * hd, kv_heads * hd};
  slices.ffn = {shard * ffn, ffn};
  return slices;
}

Status CheckWeightShards(const LlamaModel& model, int64_t shards) {
  const ModelShape& m = model.shape();
  if (shards < 1) return InvalidArgument(fmt::format("{} tensor-parallel ranks", shards));
  const bool kv_split = m.n_kv_heads % shards == 0 || shards % m.n_kv_heads == 0;
  if (m.n_heads % shards != 0 || m.ffn_dim % shards != 0 || !kv_split) {
    return InvalidArgument(fmt::format(
        "tensor parallelism of {} does not fit {}: the degree must divide its {} attention heads "
        "and its FFN width of {}, and divide its {} KV heads or be a multiple of them (each rank "
        "then holds a copy of the KV head its query heads use)",
        shards, m.name, m.n_heads, m.ffn_dim, m.n_kv_heads));
  }
  for (const LlamaLayerTensors& layer : model.layers()) {
    for (const GgufTensorInfo* info : {layer.wo, layer.w_down}) {
      uint64_t block_values = 0, block_bytes = 0;
      const int64_t cols = info->RowMajorShape().back();
      if (!GgmlTypeBlock(info->ggml_type, &block_values, &block_bytes) ||
          (cols / shards) % static_cast<int64_t>(block_values) != 0) {
        return InvalidArgument(fmt::format(
            "tensor parallelism of {}: each rank's {} columns of {} ({} in all) are not a whole "
            "number of its type's blocks of {} values",
            shards, cols / shards, info->name, cols, block_values));
      }
    }
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<LlamaWeights>> LlamaWeights::Place(const std::shared_ptr<Device>& device,
                                                            std::shared_ptr<const LlamaModel> model,
                                                            Stream& stream,
                                                            const WeightRange& range) {
  std::unique_ptr<LlamaWeights> weights(new LlamaWeights());
  weights->model_ = std::move(model);
  const LlamaModel& m = *weights->model_;
  const GgufFile& file = m.file();
  if (file.tensors().empty()) return InvalidArgument(file.name() + ": the file has no tensors");
  // The data section: from the first tensor's bytes back to its offset, to the end of the file.
  const GgufTensorInfo& first = file.tensors().front();
  const uint8_t* section = file.TensorData(first) - first.offset_bytes;
  const uint64_t section_bytes = file.file_size_bytes() - file.data_offset_bytes();

  const auto n_layers = static_cast<int64_t>(m.layers().size());
  const int64_t end_layer = range.end_layer < 0 ? n_layers : range.end_layer;
  if (range.first_layer < 0 || range.first_layer > end_layer || end_layer > n_layers) {
    return InvalidArgument(fmt::format("{}: layers [{}, {}) are not within the model's {}",
                                       file.name(), range.first_layer, end_layer, n_layers));
  }
  const bool whole = range.first_layer == 0 && end_layer == n_layers && range.embedding &&
                     range.output && range.shards == 1;
  if (range.shards > 1) HWINFER_RETURN_IF_ERROR(CheckWeightShards(m, range.shards));
  if (range.shard < 0 || range.shard >= range.shards) {
    return InvalidArgument(fmt::format("weight shard {} of {}", range.shard, range.shards));
  }
  // Import where the device can read host memory in place; the kernels only read weights.
  auto imported = device->ImportHost(const_cast<uint8_t*>(section), section_bytes);
  bool per_tensor = false;
  if (imported.ok()) {
    weights->data_ = std::move(*imported);
    weights->imported_ = true;
  } else if (imported.status().code() != StatusCode::kUnsupported) {
    return imported.status().WithContext("placing the weights of " + file.name());
  } else if (section_bytes > device->info().max_allocation_bytes || !whole) {
    per_tensor = true;
  } else {
    HWINFER_ASSIGN_OR_RETURN(weights->data_, device->Allocate(section_bytes));
    const Status uploaded = Upload(stream, section, weights->data_, section_bytes);
    if (!uploaded.ok()) {
      (void)stream.Synchronize();  // the chunks queued so far, before the buffer is freed
      return uploaded;
    }
  }

  LlamaWeights& w = *weights;
  auto place = [&](const GgufTensorInfo& info) -> StatusOr<DeviceTensor> {
    if (per_tensor) return w.PlaceInOwnBuffer(device, info, stream);
    return TensorAt(w.data_.handle(), info.offset_bytes, info);
  };
  auto place_all = [&]() -> Status {
    if (range.embedding) {
      HWINFER_ASSIGN_OR_RETURN(w.token_embd, place(m.token_embd()));
    }
    if (range.output) {
      HWINFER_ASSIGN_OR_RETURN(w.output_norm, place(m.output_norm()));
      HWINFER_ASSIGN_OR_RETURN(w.output, place(m.output()));
    }
    w.layers.resize(static_cast<size_t>(n_layers));
    for (int64_t index = range.first_layer; index < end_layer; ++index) {
      const LlamaLayerTensors& l = m.layers()[static_cast<size_t>(index)];
      LlamaLayerWeights& layer = w.layers[static_cast<size_t>(index)];
      for (auto [slot, info] :
           {std::pair{&layer.attn_norm, l.attn_norm}, {&layer.ffn_norm, l.ffn_norm}}) {
        HWINFER_ASSIGN_OR_RETURN(*slot, place(*info));
      }
      // Megatron: the outputs of q, k, v, gate and up by rows, the inputs of o and down by columns.
      const ShardSlices s = SlicesOfShard(m.shape(), range.shard, range.shards);
      for (auto [slot, info, by_rows, slice] : {std::tuple{&layer.wq, l.wq, true, s.q},
                                                {&layer.wk, l.wk, true, s.kv},
                                                {&layer.wv, l.wv, true, s.kv},
                                                {&layer.wo, l.wo, false, s.q},
                                                {&layer.w_gate, l.w_gate, true, s.ffn},
                                                {&layer.w_up, l.w_up, true, s.ffn},
                                                {&layer.w_down, l.w_down, false, s.ffn}}) {
        if (range.shards == 1) {
          HWINFER_ASSIGN_OR_RETURN(*slot, place(*info));
        } else {
          HWINFER_ASSIGN_OR_RETURN(*slot, w.PlaceShard(device, *info, by_rows, slice, stream));
        }
      }
    }
    return Status::Ok();
  };
  const Status placed = place_all();
  // Uploads still queued must finish before a failure frees their buffers.
  const Status uploaded = stream.Synchronize();
  w.shard_staging_.clear();
  HWINFER_RETURN_IF_ERROR(placed);
  HWINFER_RETURN_IF_ERROR(uploaded);
  return weights;
}

}  // namespace hwinfer
