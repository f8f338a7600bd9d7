// llama_weights.cpp — see hwinfer/llama_weights.h: the GGUF data section imported (zero-copy) or
// uploaded as one buffer, and every tensor as an offset into it.
#include "hwinfer/llama_weights.h"

#include <algorithm>

#include "hwinfer/tensor_view.h"

namespace hwinfer {

hwinfer_tensor_view DeviceTensor::View() const {
  return ContiguousView(buffer, offset_bytes, dtype, {rows, cols});
}

hwinfer_tensor_view DeviceTensor::VectorView() const {
  return ContiguousView(buffer, offset_bytes, dtype, {rows * cols});
}

StatusOr<std::unique_ptr<LlamaWeights>> LlamaWeights::Place(const std::shared_ptr<Device>& device,
                                                            std::shared_ptr<const LlamaModel> model,
                                                            Stream& stream) {
  std::unique_ptr<LlamaWeights> weights(new LlamaWeights());
  const GgufFile& file = model->file();
  if (file.tensors().empty()) return InvalidArgument(file.name() + ": the file has no tensors");
  // The data section: from the first tensor's bytes back to its offset, to the end of the file.
  const GgufTensorInfo& first = file.tensors().front();
  const uint8_t* section = file.TensorData(first) - first.offset_bytes;
  const uint64_t section_bytes = file.file_size_bytes() - file.data_offset_bytes();

  // Import where the device can read host memory in place; the kernels only read weights.
  auto imported = device->ImportHost(const_cast<uint8_t*>(section), section_bytes);
  if (imported.ok()) {
    weights->data_ = std::move(*imported);
    weights->imported_ = true;
  } else if (imported.status().code() == StatusCode::kUnsupported) {
    HWINFER_ASSIGN_OR_RETURN(weights->data_, device->Allocate(section_bytes));
    constexpr uint64_t kChunk = 256ull << 20;
    for (uint64_t done = 0; done < section_bytes; done += kChunk) {
      const uint64_t n = std::min(kChunk, section_bytes - done);
      HWINFER_RETURN_IF_ERROR(stream.CopyH2D(section + done, weights->data_, done, n));
    }
    HWINFER_RETURN_IF_ERROR(stream.Synchronize());
  } else {
    return imported.status().WithContext("placing the weights of " + file.name());
  }

  hwinfer_buffer* buffer = weights->data_.handle();
  auto place = [buffer](const GgufTensorInfo& info) {
    DeviceTensor t;
    t.buffer = buffer;
    t.offset_bytes = info.offset_bytes;
    t.dtype = info.ggml_type;
    const std::vector<int64_t> shape = info.RowMajorShape();
    t.rows = shape.size() == 2 ? shape[0] : 1;
    t.cols = shape.back();
    return t;
  };
  weights->token_embd = place(model->token_embd());
  weights->output_norm = place(model->output_norm());
  weights->output = place(model->output());
  for (const LlamaLayerTensors& l : model->layers()) {
    weights->layers.push_back({place(*l.attn_norm), place(*l.wq), place(*l.wk), place(*l.wv),
                               place(*l.wo), place(*l.ffn_norm), place(*l.w_gate), place(*l.w_up),
                               place(*l.w_down)});
  }
  weights->model_ = std::move(model);
  return weights;
}

}  // namespace hwinfer
