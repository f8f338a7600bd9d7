// hwinfer/llama_weights.h — a LlamaModel's weights placed on one device, once.
//
// Where the device can import host memory (the CPU backend) the GGUF file's mapped tensor data is
// imported as one buffer without a copy; elsewhere one device buffer receives the whole data
// section in a few large host-to-device copies, or, when the section is larger than the device's
// largest allocation (DeviceInfo::max_allocation_bytes: Vulkan's maxStorageBufferRange), each
// tensor the model uses gets its own buffer, so only a single tensor above that limit fails (with
// its name and the limit). Either way every tensor is a (buffer, offset) pair in its GGUF type
// and layout, so the kernels read the bytes llama.cpp would.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "hwinfer/device.h"
#include "hwinfer/llama_model.h"
#include "hwinfer/plugin.h"
#include "hwinfer/status.h"

namespace hwinfer {

// One weight tensor on the device: [rows, cols] row-major (a vector is rows = 1), |dtype| a
// HWINFER_DTYPE_* (= its GGML type id).
struct DeviceTensor {
  hwinfer_buffer* buffer = nullptr;  // owned by LlamaWeights
  uint64_t offset_bytes = 0;
  uint32_t dtype = HWINFER_DTYPE_F32;
  int64_t rows = 1, cols = 0;

  // The tensor as a [rows, cols] view, and a vector as a [cols] view.
  hwinfer_tensor_view View() const;
  hwinfer_tensor_view VectorView() const;
};

struct LlamaLayerWeights {
  DeviceTensor attn_norm, wq, wk, wv, wo, ffn_norm, w_gate, w_up, w_down;
};

// Which tensors a device holds when the layers are split over several (docs/multi-device.md):
// layers [first_layer, end_layer), the token embedding and the output norm and projection.
struct WeightRange {
  int64_t first_layer = 0;
  int64_t end_layer = -1;  // -1: the last layer
  bool embedding = true;
  bool output = true;
  // Tensor parallelism (Megatron): rank |shard| of |shards| holds rows [shard, shard + 1) / shards
  // of wq, wk, wv, w_gate and w_up (its heads' and FFN columns' outputs) and the same share of the
  // columns of wo and w_down (their inputs); the norms, embedding and output whole.
  int64_t shard = 0;
  int64_t shards = 1;
};

// Why |model|'s weights cannot be split over |shards| ranks (heads and the FFN width divisible by
// it, the KV heads divisible by it or dividing it, and each column share of wo and w_down a whole
// number of its type's blocks); OK when they can (always for one).
Status CheckWeightShards(const LlamaModel& model, int64_t shards);

// Rows [first, first + count) of a matrix's output, or columns of its input.
struct SliceRange {
  int64_t first = 0, count = 0;
};
// Rank |shard| of |shards|'s slices of every layer (Megatron): |q| of wq's rows and wo's columns
// (its query heads x head_dim), |kv| of wk's and wv's rows (its KV heads; with more ranks than KV
// heads, the one KV head its query heads use, held by several ranks), |ffn| of w_gate's and
// w_up's rows and w_down's columns.
struct ShardSlices {
  SliceRange q, kv, ffn;
};
ShardSlices SlicesOfShard(const ModelShape& shape, int64_t shard, int64_t shards);

class LlamaWeights {
 public:
  // Places the tensors of |model| that |range| names (default: every tensor) on |device|, using
  // |stream| for uploads (synchronised before returning); the others stay empty DeviceTensors
  // (layers keeps one entry per model layer). A device that cannot import host memory gets one
  // upload of the whole data section when it holds every tensor, else a buffer per tensor it
  // holds. Keeps |model| alive (the imported mapping belongs to it).
  static StatusOr<std::unique_ptr<LlamaWeights>> Place(const std::shared_ptr<Device>& device,
                                                       std::shared_ptr<const LlamaModel> model,
                                                       Stream& stream,
                                                       const WeightRange& range = {});

  const LlamaModel& model() const { return *model_; }
  // True when the weights are the imported file mapping (no copy was made).
  bool imported() const { return imported_; }
  // True when each tensor has its own buffer (the data section exceeds one allocation).
  bool per_tensor_buffers() const { return !tensor_buffers_.empty(); }

  DeviceTensor token_embd, output_norm, output;
  std::vector<LlamaLayerWeights> layers;

 private:
  LlamaWeights() = default;
  std::shared_ptr<const LlamaModel> model_;
  // A buffer of its own holding |info|'s bytes (uploaded on |stream|), shared by every use of the
  // tensor (tied embeddings).
  StatusOr<DeviceTensor> PlaceInOwnBuffer(const std::shared_ptr<Device>& device,
                                          const GgufTensorInfo& info, Stream& stream);
  // |info|'s rows (|by_rows|) or columns |slice|: an offset into the imported file where the
  // rows are, else a buffer of their own.
  StatusOr<DeviceTensor> PlaceShard(const std::shared_ptr<Device>& device,
                                    const GgufTensorInfo& info, bool by_rows, SliceRange slice,
                                    Stream& stream);
  // Uploads |bytes| from |src| into |buffer| on |stream|, bounding the unsynchronised bytes.
  Status UploadBounded(Stream& stream, const uint8_t* src, const Buffer& buffer, uint64_t bytes);

  Buffer data_;  // the GGUF data section, imported or uploaded; empty with per-tensor buffers
  std::map<const GgufTensorInfo*, Buffer> tensor_buffers_;  // per-tensor buffers
  std::vector<Buffer> shard_buffers_;                       // tensor-parallel slices
  std::vector<std::vector<uint8_t>> shard_staging_;         // their host bytes, until synchronised
  uint64_t unsynchronized_bytes_ = 0;  // uploaded since the last stream synchronize
  bool imported_ = false;
};

}  // namespace hwinfer
