#version 450
// attention_decode.comp — the first pass of attention_decode_paged (plugin.h), flash-decoding:
// the KV length of every (sequence, head) is split into partitions of kPartitionTokens (256 =
// HWINFER_WORKGROUP_SIZE) tokens, and one workgroup per (row = seq * n_heads + head in
// [p.row_begin, p.row_end): gl_WorkGroupID.y, partition: gl_WorkGroupID.x), both strided by
// gl_NumWorkGroups, computes for its partition's tokens t in [begin, min(begin + 256, len)), one
// token per invocation:
//   s_t = scale * dot(q[seq, head, :], K[t]),  m = max s_t,  l = sum exp(s_t - m),
//   acc[:] = sum exp(s_t - m) * V[t][:]  (one head dimension per invocation)
// into scratch[((row - row_begin) * n_parts + part) * (head_dim + 2) + {0: m, 1: l, 2..: acc}]
// (F32; attention_reduce.comp combines the partitions). Head h reads KV head h / group. K[t] and
// V[t] are row t % block_size of block block_tables[seq, t / block_size] of the pools
// [num_blocks, block_size, n_kv_heads, head_dim] F16 | I8 (I8: value = scales[block, kv_head] *
// int8, paged_kv.glsl). A partition that starts at or past the sequence's length writes nothing
// (the reduce reads only the used partitions). fp32 throughout; exp() as the conformance
// tolerance allows. (An earlier version whose workgroups walked several 256-token chunks of one
// longer partition, with the running max and sum carried across barriers, gave NaN outputs on
// lavapipe (LLVM 15) once a partition had 7 or more chunks, cause not found; so a partition is
// one chunk, and the host bounds the scratch by batching rows instead of growing partitions.)
//
// With kFlagValidate set the same shader is the validation pass, run before the decode pass: one
// invocation per block_tables entry (seq, b): a context length outside [1, max_blocks *
// block_size], or a used block id (b < ceil(len / block_size)) outside [0, num_blocks), sets
// error[0]. The decode pass (and the reduce) then do nothing at all when error[0] is set, so the
// pools are never read at a bad block id and out is left untouched, as on the CPU backend; the host
// turns the word into INVALID_ARGUMENT at the next synchronize.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "paged_kv.glsl"

layout(local_size_x = HWINFER_WORKGROUP_SIZE) in;

layout(std430, binding = 0) readonly buffer Q { uint q[]; };
layout(std430, binding = 1) readonly buffer KPool { uint k_pool[]; };
layout(std430, binding = 2) readonly buffer VPool { uint v_pool[]; };
layout(std430, binding = 3) readonly buffer KScales { float k_scales[]; };
layout(std430, binding = 4) readonly buffer VScales { float v_scales[]; };
layout(std430, binding = 5) readonly buffer Tables { int tables[]; };
layout(std430, binding = 6) readonly buffer Lens { int lens[]; };
layout(std430, binding = 7) buffer Scratch { float scratch[]; };
layout(std430, binding = 8) buffer Error { uint error[]; };

// Tokens per partition: one per invocation.
const uint kPartitionTokens = HWINFER_WORKGROUP_SIZE;

const uint kFlagValidate = 1u;
const uint kFlagQF16 = 2u;
const uint kFlagKI8 = 4u;
const uint kFlagVI8 = 8u;

// 32 words (the 128-byte limit); offsets and strides in elements of each operand's dtype.
layout(push_constant) uniform Params {
  uint row_begin, row_end;  // (seq * n_heads + head) rows of this dispatch; validation: all
  uint n_heads, group, head_dim, block_size, max_blocks, num_blocks, flags;
  float scale;
  uint q_offset, q_seq_stride, q_head_stride;
  uint k_offset, k_block_stride, k_row_stride, k_head_stride;
  uint v_offset, v_block_stride, v_row_stride, v_head_stride;
  uint ks_offset, ks_block_stride, ks_head_stride;  // I8 k pool only
  uint vs_offset, vs_block_stride, vs_head_stride;  // I8 v pool only
  uint bt_offset, bt_seq_stride, bt_block_stride;
  uint cl_offset, cl_stride;
} p;

HWINFER_DEFINE_LOAD(load_q, q)
HWINFER_DEFINE_POOL_LOAD(load_k, k_pool)
HWINFER_DEFINE_POOL_LOAD(load_v, v_pool)

shared float s_red[HWINFER_WORKGROUP_SIZE];    // reductions
shared float s_weight[HWINFER_WORKGROUP_SIZE];  // exp(s_t - m) of the partition's tokens
shared uint s_vrow[HWINFER_WORKGROUP_SIZE];     // element index of V[t][0]
shared float s_vscale[HWINFER_WORKGROUP_SIZE];  // V[t]'s scale (I8) or 1

void validate() {
  const uint total = (p.row_end / p.n_heads) * p.max_blocks;  // n_seqs * max_blocks
  const uint max_len = p.max_blocks * p.block_size;  // fits an I32 (checked on the host)
  const uint step = gl_NumWorkGroups.x * HWINFER_WORKGROUP_SIZE;
  for (uint i = gl_WorkGroupID.x * HWINFER_WORKGROUP_SIZE + gl_LocalInvocationID.x; i < total;
       i += step) {
    const uint seq = i / p.max_blocks, b = i % p.max_blocks;
    const int len = lens[p.cl_offset + seq * p.cl_stride];
    bool bad = false;
    if (len < 1 || uint(len) > max_len) {
      bad = b == 0u;
    } else if (b < (uint(len) + p.block_size - 1u) / p.block_size) {
      const int id = tables[p.bt_offset + seq * p.bt_seq_stride + b * p.bt_block_stride];
      bad = id < 0 || uint(id) >= p.num_blocks;
    }
    if (bad) atomicOr(error[0], 1u);
  }
}

// Reduces s_red with op max (is_max) or +; every invocation gets the result.
float reduce_shared(bool is_max) {
  barrier();
  for (uint s = HWINFER_WORKGROUP_SIZE / 2u; s > 0u; s >>= 1u) {
    const uint lid = gl_LocalInvocationID.x;
    if (lid < s) s_red[lid] = is_max ? max(s_red[lid], s_red[lid + s]) : s_red[lid] + s_red[lid + s];
    barrier();
  }
  const float result = s_red[0];
  barrier();  // s_red is free again
  return result;
}

void decode() {
  if (error[0] != 0u) return;  // bad table or lengths: nothing is read or written
  const uint lid = gl_LocalInvocationID.x;
  const bool q_f16 = (p.flags & kFlagQF16) != 0u;
  const bool k_i8 = (p.flags & kFlagKI8) != 0u;
  const bool v_i8 = (p.flags & kFlagVI8) != 0u;
  const uint n_parts = (p.max_blocks * p.block_size + kPartitionTokens - 1u) / kPartitionTokens;
  const float neg_inf = uintBitsToFloat(0xff800000u);
  for (uint row = p.row_begin + gl_WorkGroupID.y; row < p.row_end; row += gl_NumWorkGroups.y) {
    const uint seq = row / p.n_heads, head = row % p.n_heads, kv_head = head / p.group;
    const uint len = uint(lens[p.cl_offset + seq * p.cl_stride]);  // validated
    const uint q_row = p.q_offset + seq * p.q_seq_stride + head * p.q_head_stride;
    const uint table = p.bt_offset + seq * p.bt_seq_stride;
    for (uint part = gl_WorkGroupID.x; part < n_parts; part += gl_NumWorkGroups.x) {
      const uint begin = part * kPartitionTokens;
      if (begin >= len) continue;  // uniform: the reduce reads only the used partitions
      const uint end = min(begin + kPartitionTokens, len);
      const uint dst = ((row - p.row_begin) * n_parts + part) * (p.head_dim + 2u);
      // Scores: token begin + lid.
      const uint t = begin + lid;
      float s = neg_inf;
      if (t < end) {
        const uint block = uint(tables[table + (t / p.block_size) * p.bt_block_stride]);
        const uint r = t % p.block_size;
        const uint k_row = p.k_offset + block * p.k_block_stride + r * p.k_row_stride +
                           kv_head * p.k_head_stride;
        const float k_scale =
            k_i8 ? k_scales[p.ks_offset + block * p.ks_block_stride + kv_head * p.ks_head_stride]
                 : 1.0;
        float dot_qk = 0.0;
        for (uint d = 0u; d < p.head_dim; ++d) {
          dot_qk += load_q(q_f16, q_row + d) * load_k(k_i8, k_row + d, k_scale);
        }
        s = p.scale * dot_qk;
        s_vrow[lid] = p.v_offset + block * p.v_block_stride + r * p.v_row_stride +
                      kv_head * p.v_head_stride;
        s_vscale[lid] =
            v_i8 ? v_scales[p.vs_offset + block * p.vs_block_stride + kv_head * p.vs_head_stride]
                 : 1.0;
      }
      s_red[lid] = s;
      const float m = reduce_shared(true);  // finite: token begin is in range
      const float w = t < end ? exp(s - m) : 0.0;
      s_weight[lid] = w;
      s_red[lid] = w;
      const float l = reduce_shared(false);  // its barriers also publish s_weight, s_vrow
      // Values: head dimension d of every token of the partition.
      const uint n = end - begin;
      for (uint d = lid; d < p.head_dim; d += HWINFER_WORKGROUP_SIZE) {
        float acc = 0.0;
        for (uint j = 0u; j < n; ++j) {
          acc += s_weight[j] * load_v(v_i8, s_vrow[j] + d, s_vscale[j]);
        }
        scratch[dst + 2u + d] = acc;
      }
      if (lid == 0u) {
        scratch[dst] = m;
        scratch[dst + 1u] = l;
      }
      barrier();  // the shared arrays are read before the next partition writes them
    }
  }
}

void main() {
  if ((p.flags & kFlagValidate) != 0u) {
    validate();
  } else {
    decode();
  }
}
