// hwinfer/llama_weights.h — a LlamaModel's weights placed on one device, once.
//
// Where the device can import host memory (the CPU backend) the GGUF file's mapped tensor data is
// imported as one buffer without a copy; elsewhere one device buffer receives the whole data
// section in a few large host-to-device copies. Either way every tensor is a (buffer, offset)
// pair inside that one buffer, in its GGUF type and layout, so the kernels read the bytes
// llama.cpp would.
#pragma once

#include <cstdint>
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

class LlamaWeights {
 public:
  // Places every tensor of |model| on |device|, using |stream| for uploads (synchronised before
  // returning). Keeps |model| alive (the imported mapping belongs to it).
  static StatusOr<std::unique_ptr<LlamaWeights>> Place(const std::shared_ptr<Device>& device,
                                                       std::shared_ptr<const LlamaModel> model,
                                                       Stream& stream);

  const LlamaModel& model() const { return *model_; }
  // True when the weights are the imported file mapping (no copy was made).
  bool imported() const { return imported_; }

  DeviceTensor token_embd, output_norm, output;
  std::vector<LlamaLayerWeights> layers;

 private:
  LlamaWeights() = default;
  std::shared_ptr<const LlamaModel> model_;
  Buffer data_;  // the GGUF data section, imported or uploaded
  bool imported_ = false;
};

}  // namespace hwinfer
