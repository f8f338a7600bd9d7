// embedding_tests.cpp — conformance of the embedding lookup against the scalar reference
// (hwinfer::reference::embedding_reference) on fresh random tables and ids (the seed is in every
// failure message; HWINFER_CONFORMANCE_SEED=<seed> repeats it): every table dtype (F32, F16, BF16,
// every block type in GGUF block layout), repeated ids, padded table rows, strided ids, unaligned
// offsets, out poisoned with NaN, guard bands checked, inputs unchanged; an id outside [0, vocab)
// (past the end or negative) is INVALID_ARGUMENT by the next sync; malformed descriptors rejected.
// Tolerances: row_matrix.h (dequantization is exact in f32, so F32's). Must not loosen them.
//
//   table: [vocab, dim] F32 | F16 | BF16 | any block type;  ids: [n_tokens] I32;  out: [n_tokens,
//   dim] F32
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "case_runner.h"
#include "conformance_fixture.h"
#include "hwinfer/tensor_view.h"
#include "reference/half.h"
#include "reference/quantize_blocks.h"
#include "reference/reference_ops.h"
#include "reference/weight_blocks.h"
#include "row_matrix.h"

namespace hwinfer::conformance {
namespace {

using EmbeddingTest = ConformanceTest;

const uint32_t kTableDtypes[] = {HWINFER_DTYPE_F32,  HWINFER_DTYPE_F16,  HWINFER_DTYPE_BF16,
                                 HWINFER_DTYPE_Q8_0, HWINFER_DTYPE_Q4_0, HWINFER_DTYPE_Q4_1,
                                 HWINFER_DTYPE_Q5_0, HWINFER_DTYPE_Q5_1, HWINFER_DTYPE_IQ4_NL,
                                 HWINFER_DTYPE_Q2_K, HWINFER_DTYPE_Q3_K, HWINFER_DTYPE_Q4_K,
                                 HWINFER_DTYPE_Q5_K, HWINFER_DTYPE_Q6_K};

bool IsBlockDtype(uint32_t dtype) { return hwinfer_dtype_block_values(dtype) != 0; }

// |dim| (a multiple of 32) for every dtype but the K-quants, whose rows get dim / 32 super-blocks.
int64_t DimFor(uint32_t dtype, int64_t dim) {
  return hwinfer_dtype_block_values(dtype) == 256 ? dim / 32 * 256 : dim;
}

// A [vocab, dim] table of |dtype| in a poisoned buffer image: rows |row_pad| bytes apart beyond
// their packed size, starting at |offset|.
struct Table {
  uint32_t dtype = HWINFER_DTYPE_F32;
  int64_t vocab = 0, dim = 0, row_bytes = 0, row_stride = 0;
  uint64_t offset = 0;
  std::vector<uint8_t> image;

  Table(uint32_t dtype_in, int64_t vocab_in, int64_t dim_in, int64_t row_pad, uint64_t offset_in,
        std::mt19937_64& rng)
      : dtype(dtype_in), vocab(vocab_in), dim(dim_in), offset(offset_in) {
    row_bytes = static_cast<int64_t>(RowBytes(dtype, dim));
    row_stride = row_bytes + row_pad;
    image.assign(offset + static_cast<uint64_t>(vocab * row_stride) + 128, kPoisonByte);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> row(static_cast<size_t>(dim));
    for (int64_t v = 0; v < vocab; ++v) {
      for (float& x : row) x = normal(rng);
      uint8_t* dst = image.data() + offset + v * row_stride;
      WriteRow(row, dst);
    }
  }

  void WriteRow(const std::vector<float>& row, uint8_t* dst) const {
    switch (dtype) {
      case HWINFER_DTYPE_F32:
        std::memcpy(dst, row.data(), row.size() * sizeof(float));
        return;
      case HWINFER_DTYPE_F16:
      case HWINFER_DTYPE_BF16:
        for (size_t i = 0; i < row.size(); ++i) {
          const uint16_t bits = dtype == HWINFER_DTYPE_F16 ? reference::f32_to_f16(row[i])
                                                           : reference::f32_to_bf16(row[i]);
          std::memcpy(dst + 2 * i, &bits, sizeof(bits));
        }
        return;
      case HWINFER_DTYPE_Q8_0: {
        std::vector<hwinfer_block_q8_0> blocks(row.size() / HWINFER_QK8_0);
        reference::quantize_q8_0(row.data(), blocks.data(), dim);
        std::memcpy(dst, blocks.data(), static_cast<size_t>(row_bytes));
        return;
      }
      case HWINFER_DTYPE_Q4_0: {
        std::vector<hwinfer_block_q4_0> blocks(row.size() / HWINFER_QK4_0);
        reference::quantize_q4_0(row.data(), blocks.data(), dim);
        std::memcpy(dst, blocks.data(), static_cast<size_t>(row_bytes));
        return;
      }
      default:
        // The other block types: random blocks (every quant bit pattern), drawn from the row.
        uint64_t seed = 0;
        std::memcpy(&seed, row.data(), sizeof(seed));
        reference::fill_random_blocks(dtype, dim / hwinfer_dtype_block_values(dtype), seed, dst);
        return;
    }
  }

  hwinfer_tensor_view View(const Buffer& buffer) const {
    hwinfer_tensor_view view = ContiguousView(buffer, offset, dtype, {vocab, dim});
    view.strides_bytes[0] = row_stride;
    return view;
  }
};

// |ids| as I32, |stride| elements apart, at |offset| in a poisoned image with a back guard.
std::vector<uint8_t> IdsImage(const std::vector<int32_t>& ids, int64_t stride, uint64_t offset) {
  std::vector<uint8_t> image(offset + ids.size() * static_cast<size_t>(stride) * 4 + 64,
                             kPoisonByte);
  for (size_t t = 0; t < ids.size(); ++t) {
    std::memcpy(image.data() + offset + t * static_cast<size_t>(stride) * 4, &ids[t], 4);
  }
  return image;
}

struct EmbeddingCase {
  int64_t n_tokens = 1, vocab = 1, dim = 32;
  uint32_t dtype = HWINFER_DTYPE_F32;
  int64_t table_row_pad = 0;  // bytes
  uint64_t table_offset = 64;
  int64_t ids_stride = 1;  // elements
  int64_t out_pad = 0;     // elements
  uint64_t out_offset = 64;
  bool one_id = false;  // every token looks up the same row

  std::string Describe() const {
    return fmt::format(
        "n_tokens={} vocab={} dim={} table={} table_row_pad={} table_offset={} ids_stride={} "
        "out_pad={} out_offset={}{}",
        n_tokens, vocab, dim, DtypeName(dtype), table_row_pad, table_offset, ids_stride, out_pad,
        out_offset, one_id ? " (one id repeated)" : "");
  }
};

hwinfer_embedding_desc MakeDesc(int64_t n_tokens, int64_t vocab, int64_t dim,
                                hwinfer_tensor_view table, hwinfer_tensor_view ids,
                                hwinfer_tensor_view out) {
  hwinfer_embedding_desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.struct_size = sizeof(desc);
  desc.kind = HWINFER_KERNEL_EMBEDDING;
  desc.n_tokens = n_tokens;
  desc.vocab = vocab;
  desc.dim = dim;
  desc.table = table;
  desc.ids = ids;
  desc.out = out;
  return desc;
}

// Runs one case: kUnsupported (with |reason|) when the device answers UNSUPPORTED, else kRan
// (its checks report their own failures).
CaseResult RunEmbeddingCase(Device& device, Stream& stream, const EmbeddingCase& c,
                            std::mt19937_64& rng, std::string& reason) {
  SCOPED_TRACE(c.Describe());
  const Table table(c.dtype, c.vocab, c.dim, c.table_row_pad, c.table_offset, rng);
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(c.vocab - 1));
  std::vector<int32_t> ids(static_cast<size_t>(c.n_tokens));
  const int32_t same = pick(rng);
  for (int32_t& id : ids) id = c.one_id ? same : pick(rng);
  if (!c.one_id) {
    ids.front() = 0;
    ids.back() = static_cast<int32_t>(c.vocab - 1);
  }
  const std::vector<uint8_t> ids_image = IdsImage(ids, c.ids_stride, 32);
  RowMatrix out(HWINFER_DTYPE_F32, c.n_tokens, c.dim, c.out_pad, c.out_offset);
  out.FillNan();

  Buffer tb, ib, ob;
  if (!UploadAll(device, stream, {{&tb, &table.image}, {&ib, &ids_image}, {&ob, &out.image}})) {
    return CaseResult::kRan;
  }
  hwinfer_tensor_view ids_view = ContiguousView(ib, 32, HWINFER_DTYPE_I32, {c.n_tokens});
  ids_view.strides_bytes[0] = c.ids_stride * 4;
  const hwinfer_embedding_desc desc =
      MakeDesc(c.n_tokens, c.vocab, c.dim, table.View(tb), ids_view, out.View(ob));
  if (const auto early =
          QueryAndLaunch(device, stream, AsKernelDesc(desc), "embedding", c.Describe(), reason)) {
    return *early;
  }
  std::vector<uint8_t> t_after, i_after, o_after;
  if (!DownloadAll(stream, {{&t_after, &tb}, {&i_after, &ib}, {&o_after, &ob}}))
    return CaseResult::kRan;
  EXPECT_TRUE(BytesEqual(t_after.data(), table.image.data(), table.image.size(), "table"));
  EXPECT_TRUE(BytesEqual(i_after.data(), ids_image.data(), ids_image.size(), "ids"));
  EXPECT_TRUE(out.OnlyElementsChanged(o_after, "out"));
  std::vector<float> ref(static_cast<size_t>(c.n_tokens * c.dim));
  EXPECT_TRUE(reference::embedding_reference(c.n_tokens, c.vocab, c.dim, c.dtype,
                                             table.image.data() + table.offset, table.row_stride,
                                             ids.data(), ref.data()));
  ExpectNmse(out.Dense(o_after), ref, kMaxNmseF32, "out");
  return CaseResult::kRan;
}

void RunEmbeddingCases(Device& device, Stream& stream, const std::vector<EmbeddingCase>& cases) {
  RunCases(device, cases, "embedding cases",
           [&](const EmbeddingCase& c, std::mt19937_64& rng, std::string& reason) {
             return RunEmbeddingCase(device, stream, c, rng, reason);
           });
}

struct Shape {
  int64_t n_tokens, vocab, dim;
};
// 600 tokens of 128 and 3 of 4096 values: more than one work item of the cpu backend.
const Shape kShapes[] = {{1, 1, 32},     {5, 100, 64},  {37, 1000, 256},
                         {600, 50, 128}, {3, 10, 4096}, {2, 7, 96}};

std::vector<EmbeddingCase> ShapeCases(const EmbeddingCase& base) {
  std::vector<EmbeddingCase> cases;
  for (uint32_t dtype : kTableDtypes) {
    for (const Shape& s : kShapes) {
      EmbeddingCase c = base;
      c.dtype = dtype;
      c.n_tokens = s.n_tokens;
      c.vocab = s.vocab;
      c.dim = DimFor(dtype, s.dim);
      cases.push_back(c);
    }
  }
  return cases;
}

TEST_P(EmbeddingTest, EveryTableDtypeMatchesReference) {
  RunEmbeddingCases(device(), stream(), ShapeCases(EmbeddingCase{}));
}

TEST_P(EmbeddingTest, UnblockedTablesTakeAnyDim) {
  std::vector<EmbeddingCase> cases;
  for (uint32_t dtype : {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16, HWINFER_DTYPE_BF16}) {
    for (int64_t dim : {1, 7, 33, 1000}) {
      EmbeddingCase c;
      c.dtype = dtype;
      c.n_tokens = 4;
      c.vocab = 9;
      c.dim = dim;
      cases.push_back(c);
    }
  }
  RunEmbeddingCases(device(), stream(), cases);
}

TEST_P(EmbeddingTest, RepeatedIdsReadTheSameRow) {
  EmbeddingCase base;
  base.one_id = true;
  RunEmbeddingCases(device(), stream(), ShapeCases(base));
}

TEST_P(EmbeddingTest, PaddedRowsStridedIdsAndUnalignedOffsets) {
  std::vector<EmbeddingCase> cases;
  for (uint32_t dtype : kTableDtypes) {
    for (const Shape& s : kShapes) {
      EmbeddingCase c;
      c.dtype = dtype;
      c.n_tokens = s.n_tokens;
      c.vocab = s.vocab;
      c.dim = DimFor(dtype, s.dim);
      // Blocks need no alignment: odd offsets and paddings; plain dtypes stay element-aligned.
      c.table_row_pad = IsBlockDtype(dtype) ? 5 : 12;
      c.table_offset = IsBlockDtype(dtype) ? 67 : 68;
      c.ids_stride = 3;
      c.out_pad = 3;
      c.out_offset = 68;
      cases.push_back(c);
    }
  }
  RunEmbeddingCases(device(), stream(), cases);
}

// An id past the vocab or negative is INVALID_ARGUMENT (at enqueue or from the next synchronize),
// never a read outside the table or a write outside out; the stream stays usable afterwards.
TEST_P(EmbeddingTest, IdOutsideVocabIsAnErrorAtSync) {
  constexpr int64_t vocab = 10, dim = 64;
  std::mt19937_64 rng(TestSeed());
  for (uint32_t dtype : {HWINFER_DTYPE_F32, HWINFER_DTYPE_Q4_0}) {
    const Table table(dtype, vocab, dim, 0, 64, rng);
    ASSERT_OK_AND_ASSIGN(Buffer tb, UploadImage(device(), stream(), table.image));
    for (const std::vector<int32_t>& ids :
         {std::vector<int32_t>{0, 10, 3}, std::vector<int32_t>{-1, 0, 1},
          std::vector<int32_t>{2, 3, std::numeric_limits<int32_t>::max()},
          std::vector<int32_t>{std::numeric_limits<int32_t>::min(), 0, 0}}) {
      SCOPED_TRACE(testing::Message()
                   << DtypeName(dtype) << " ids " << ids[0] << ", " << ids[1] << ", " << ids[2]);
      const std::vector<uint8_t> ids_image = IdsImage(ids, 1, 32);
      RowMatrix out(HWINFER_DTYPE_F32, 3, dim, 0, 64);
      out.FillNan();
      ASSERT_OK_AND_ASSIGN(Buffer ib, UploadImage(device(), stream(), ids_image));
      ASSERT_OK_AND_ASSIGN(Buffer ob, UploadImage(device(), stream(), out.image));
      const hwinfer_embedding_desc desc =
          MakeDesc(3, vocab, dim, table.View(tb), ContiguousView(ib, 32, HWINFER_DTYPE_I32, {3}),
                   out.View(ob));
      if (!RequireKernel(device(), AsKernelDesc(desc))) return;
      const Status launched = stream().Launch(AsKernelDesc(desc));
      const Status synced = stream().Synchronize();
      const Status& error = launched.ok() ? synced : launched;
      EXPECT_EQ(error.code(), StatusCode::kInvalidArgument)
          << "an out-of-range id gave " << error.ToString();
      ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> out_after, Download(stream(), ob));
      EXPECT_TRUE(out.OnlyElementsChanged(out_after, "out"));
      // The stream still runs kernels.
      const std::vector<uint8_t> good_image = IdsImage({1, 2, 9}, 1, 32);
      ASSERT_OK(Upload(stream(), ib, good_image));
      EXPECT_OK(stream().Launch(AsKernelDesc(desc)));
      EXPECT_OK(stream().Synchronize());
    }
  }
}

// A well-formed Q8_0 lookup (2 tokens, vocab 4, dim 64) with views that exactly fill their
// buffers, mutated one way at a time.
TEST_P(EmbeddingTest, MalformedDescriptorsAreRejected) {
  constexpr int64_t n = 2, vocab = 4, dim = 64;
  constexpr uint64_t kTableBytes = vocab * (dim / 32) * HWINFER_Q8_0_BLOCK_BYTES;
  std::mt19937_64 rng(TestSeed());
  const Table table(HWINFER_DTYPE_Q8_0, vocab, dim, 0, 0, rng);
  ASSERT_OK_AND_ASSIGN(Buffer tb, UploadImage(device(), stream(), table.image));
  ASSERT_OK_AND_ASSIGN(Buffer ids, FilledBuffer(device(), stream(), n * 4, 0));
  ASSERT_OK_AND_ASSIGN(Buffer out, FilledBuffer(device(), stream(), n * dim * 4, kPoisonByte));
  ASSERT_LE(kTableBytes, table.image.size());
  const hwinfer_embedding_desc valid =
      MakeDesc(n, vocab, dim, table.View(tb), ContiguousView(ids, 0, HWINFER_DTYPE_I32, {n}),
               ContiguousView(out, 0, HWINFER_DTYPE_F32, {n, dim}));
  if (!RequireKernel(device(), AsKernelDesc(valid))) return;

  enum Expect { kRejectedByQuery, kUnsupportedByQuery, kRejectedAtLaunch };
  struct Variant {
    const char* what;
    Expect expect;
    void (*mutate)(hwinfer_embedding_desc&);
  };
  const Variant variants[] = {
      {"dim not a multiple of 32 for Q8_0", kRejectedByQuery,
       [](hwinfer_embedding_desc& d) { d.dim = d.table.shape[1] = d.out.shape[1] = 48; }},
      {"vocab disagrees with the table", kRejectedByQuery,
       [](hwinfer_embedding_desc& d) { d.vocab = 5; }},
      {"n_tokens = 0", kRejectedByQuery,
       [](hwinfer_embedding_desc& d) { d.n_tokens = d.ids.shape[0] = d.out.shape[0] = 0; }},
      {"Q8_0 table with a non-zero innermost stride", kRejectedByQuery,
       [](hwinfer_embedding_desc& d) { d.table.strides_bytes[1] = 1; }},
      {"table has dtype I8", kRejectedByQuery,
       [](hwinfer_embedding_desc& d) { d.table.dtype = HWINFER_DTYPE_I8; }},
      {"table has an unknown dtype", kUnsupportedByQuery,
       [](hwinfer_embedding_desc& d) { d.table.dtype = 99; }},
      {"out has dtype F16", kRejectedByQuery,
       [](hwinfer_embedding_desc& d) { d.out.dtype = HWINFER_DTYPE_F16; }},
      {"ids have dtype F32", kRejectedByQuery,
       [](hwinfer_embedding_desc& d) { d.ids.dtype = HWINFER_DTYPE_F32; }},
      {"out's shape disagrees with dim", kRejectedByQuery,
       [](hwinfer_embedding_desc& d) { d.out.shape[1] = 32; }},
      {"struct_size too small", kRejectedByQuery,
       [](hwinfer_embedding_desc& d) { d.struct_size = sizeof(hwinfer_kernel_desc) + 8; }},
      {"out runs 4 bytes past its buffer", kRejectedAtLaunch,
       [](hwinfer_embedding_desc& d) { d.out.offset_bytes = 4; }},
      {"table rows run past the buffer", kRejectedAtLaunch,
       [](hwinfer_embedding_desc& d) { d.table.strides_bytes[0] += 100; }},
      {"ids have no buffer", kRejectedAtLaunch,
       [](hwinfer_embedding_desc& d) { d.ids.buffer = nullptr; }},
  };
  for (const Variant& variant : variants) {
    SCOPED_TRACE(variant.what);
    hwinfer_embedding_desc desc = valid;
    variant.mutate(desc);
    ExpectRejected(device(), stream(), AsKernelDesc(desc),
                   variant.expect == kRejectedAtLaunch     ? QueryCheck::kNotChecked
                   : variant.expect == kUnsupportedByQuery ? QueryCheck::kUnsupported
                                                           : QueryCheck::kNotSupported,
                   "a malformed embedding was accepted at enqueue");
  }
  EXPECT_OK(stream().Synchronize());
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> out_after, Download(stream(), out));
  EXPECT_TRUE(BytesAre(out_after.data(), out_after.size(), kPoisonByte, "out after rejections"));
}

INSTANTIATE_TEST_SUITE_P(Embedding, EmbeddingTest, testing::ValuesIn(BackendParams()),
                         BackendParamName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(EmbeddingTest);

}  // namespace
}  // namespace hwinfer::conformance
