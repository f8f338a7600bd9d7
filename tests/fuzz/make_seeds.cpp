// make_seeds.cpp — writes the fuzz seed corpus (tests/fuzz/corpus) with GgufWriter: small valid
// files covering every value and tensor type, the metadata of a real tiny-llama file with tiny
// tensors, and truncated or mutated copies. Run by hand (target gguf_fuzz_seeds); must not be
// part of any test, and must keep the corpus well under 200 KB.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "hwinfer/gguf.h"
#include "hwinfer/plugin.h"

namespace {

using hwinfer::GgufType;
using hwinfer::GgufValue;

void Save(const std::string& dir, const std::string& name, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen((dir + "/" + name).c_str(), "wb");
  if (f == nullptr) return;
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

std::vector<uint8_t> Serialize(const hwinfer::GgufWriter& writer) {
  auto bytes = writer.Serialize();
  return bytes.ok() ? bytes.value() : std::vector<uint8_t>{};
}

void AddSmallTensors(hwinfer::GgufWriter* w, const std::vector<uint8_t>& zeros) {
  (void)w->AddTensor("token_embd.weight", HWINFER_DTYPE_Q4_0, {32, 2}, zeros.data(), 36);
  (void)w->AddTensor("blk.0.attn_q.weight", HWINFER_DTYPE_Q8_0, {32, 1}, zeros.data(), 34);
  (void)w->AddTensor("blk.0.ffn_up.weight", HWINFER_DTYPE_F16, {4, 2}, zeros.data(), 16);
  (void)w->AddTensor("blk.0.ffn_down.weight", HWINFER_DTYPE_BF16, {2, 2, 2}, zeros.data(), 16);
  (void)w->AddTensor("output_norm.weight", HWINFER_DTYPE_F32, {4}, zeros.data(), 16);
}

// A complete, valid Llama model (every key and tensor LlamaModel checks, 1 layer, GQA 2:1), so
// mutations reach the model checks: dims [d], heads 2, KV heads 1, ffn 2d, vocab d; matrices of
// |type| (F32 or Q4_0 with d = 32), norms F32, output tied to the embedding.
std::vector<uint8_t> LlamaSeed(uint32_t type, uint64_t d) {
  const uint64_t ffn = 2 * d, vocab = d, kv = d / 2;
  hwinfer::GgufWriter w;
  (void)w.AddKv("general.architecture", GgufValue::String("llama"));
  (void)w.AddKv("llama.block_count", GgufValue::Uint32(1));
  (void)w.AddKv("llama.context_length", GgufValue::Uint32(64));
  (void)w.AddKv("llama.embedding_length", GgufValue::Uint32(static_cast<uint32_t>(d)));
  (void)w.AddKv("llama.feed_forward_length", GgufValue::Uint32(static_cast<uint32_t>(ffn)));
  (void)w.AddKv("llama.attention.head_count", GgufValue::Uint32(2));
  (void)w.AddKv("llama.attention.head_count_kv", GgufValue::Uint32(1));
  (void)w.AddKv("llama.attention.layer_norm_rms_epsilon", GgufValue::Float32(1e-5f));
  (void)w.AddKv("llama.rope.freq_base", GgufValue::Float32(10000.0f));
  static std::vector<uint8_t> zeros(1 << 16, 0);
  auto matrix = [&](const std::string& name, uint64_t rows, uint64_t cols) {
    const uint64_t bytes = type == HWINFER_DTYPE_Q4_0 ? rows * cols / 32 * 18 : rows * cols * 4;
    (void)w.AddTensor(name, type, {cols, rows}, zeros.data(), bytes);
  };
  auto norm = [&](const std::string& name) {
    (void)w.AddTensor(name, HWINFER_DTYPE_F32, {d}, zeros.data(), d * 4);
  };
  matrix("token_embd.weight", vocab, d);
  norm("output_norm.weight");
  norm("blk.0.attn_norm.weight");
  matrix("blk.0.attn_q.weight", d, d);
  matrix("blk.0.attn_k.weight", kv, d);
  matrix("blk.0.attn_v.weight", kv, d);
  matrix("blk.0.attn_output.weight", d, d);
  norm("blk.0.ffn_norm.weight");
  matrix("blk.0.ffn_gate.weight", ffn, d);
  matrix("blk.0.ffn_up.weight", ffn, d);
  matrix("blk.0.ffn_down.weight", d, ffn);
  return Serialize(w);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR [tiny-llama.gguf]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const std::vector<uint8_t> zeros(256, 0);
  Save(dir, "empty", Serialize(hwinfer::GgufWriter()));

  hwinfer::GgufWriter all;
  (void)all.AddKv("u8", GgufValue::Uint8(1));
  (void)all.AddKv("i8", GgufValue::Int8(-1));
  (void)all.AddKv("u16", GgufValue::Uint16(2));
  (void)all.AddKv("i16", GgufValue::Int16(-2));
  (void)all.AddKv("u32", GgufValue::Uint32(3));
  (void)all.AddKv("i32", GgufValue::Int32(-3));
  (void)all.AddKv("f32", GgufValue::Float32(0.5f));
  (void)all.AddKv("bool", GgufValue::Bool(true));
  (void)all.AddKv("str", GgufValue::String("llama"));
  (void)all.AddKv("u64", GgufValue::Uint64(4));
  (void)all.AddKv("i64", GgufValue::Int64(-4));
  (void)all.AddKv("f64", GgufValue::Float64(0.25));
  (void)all.AddKv("arr", GgufValue::Array(GgufType::kString, {GgufValue::String("a")}));
  (void)all.AddKv("nested",
                  GgufValue::Array(GgufType::kArray, {GgufValue::Array(GgufType::kInt32, {})}));
  Save(dir, "all-value-types", Serialize(all));

  hwinfer::GgufWriter small;
  (void)small.AddKv("general.architecture", GgufValue::String("llama"));
  (void)small.AddKv("llama.block_count", GgufValue::Uint32(1));
  AddSmallTensors(&small, zeros);
  const std::vector<uint8_t> small_bytes = Serialize(small);
  Save(dir, "small-model", small_bytes);

  hwinfer::GgufWriter aligned;
  (void)aligned.AddKv("general.alignment", GgufValue::Uint32(64));
  AddSmallTensors(&aligned, zeros);
  Save(dir, "aligned-64", Serialize(aligned));

  // Truncated and mutated copies of the small model (offsets of its first tensor info follow the
  // two KVs).
  for (size_t cut :
       {size_t{3}, size_t{20}, size_t{40}, small_bytes.size() / 2, small_bytes.size() - 1}) {
    Save(dir, "small-cut-" + std::to_string(cut),
         std::vector<uint8_t>(small_bytes.begin(),
                              small_bytes.begin() + static_cast<std::ptrdiff_t>(cut)));
  }
  std::vector<uint8_t> v1 = small_bytes;
  v1[4] = 1;
  Save(dir, "small-version-1", v1);
  std::vector<uint8_t> v2 = small_bytes;
  v2[4] = 2;
  Save(dir, "small-version-2", v2);

  Save(dir, "llama-model-f32", LlamaSeed(HWINFER_DTYPE_F32, 8));
  Save(dir, "llama-model-q4_0", LlamaSeed(HWINFER_DTYPE_Q4_0, 32));

  if (argc > 2) {
    // The real metadata (tokenizer arrays included) of a tiny-llama file, with tiny tensors.
    auto real = hwinfer::GgufFile::Open(argv[2]);
    if (real.ok()) {
      hwinfer::GgufWriter meta;
      for (const auto& kv : real.value()->metadata()) (void)meta.AddKv(kv.first, kv.second);
      AddSmallTensors(&meta, zeros);
      Save(dir, "tiny-llama-metadata", Serialize(meta));
    }
  }
  return 0;
}
