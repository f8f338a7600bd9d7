#version 450
// attention_prefill.comp — fused attention prefill (plugin.h hwinfer_attention_prefill_desc),
// flash-attention style: the score matrix is never materialised.
//   q, out: [n_tokens, n_heads, head_dim]     F32 | F16 (out has q's dtype; innermost contiguous)
//   k, v:   [n_tokens, n_kv_heads, head_dim]  F32 | F16 each (the new tokens' keys and values)
//   query_start: [n_seqs + 1] I32, sequence s owns tokens query_start[s] .. query_start[s+1]-1
//   optional cached prefix (flag HAS_PREFIX): k_cache, v_cache [num_blocks, block_size,
//   n_kv_heads, head_dim] F16 | I8 (k_scales, v_scales [num_blocks, n_kv_heads] F32 for I8),
//   block_tables [n_seqs, max_blocks] I32, context_lens [n_seqs] I32 (paged_kv.glsl).
// Query token t of sequence s, head h (KV head h / group) attends first to the context_lens[s]
// cached tokens of s, then to the new tokens of s: all of them (full) or those up to t (causal).
//
// Two passes of this shader, separated by a barrier (flag VALIDATE):
//   1. validation: workgroups strided over s in [0, n_seqs]; query_start must rise from 0 to
//      n_tokens, each context_lens[s] must lie in [0, max_blocks * block_size] and every block id
//      a sequence uses in [0, num_blocks). Anything else sets error[0] (INVALID_ARGUMENT at the
//      next synchronize, as the CPU backend reports it).
//   2. attention: when error[0] is set nothing is written (the CPU backend validates before it
//      writes too). Otherwise one workgroup per (query token, head) item, items strided by
//      gl_NumWorkGroups.x. The workgroup finds the token's sequence by a binary search over
//      query_start (device data), holds the q row in shared memory and walks the keys in tiles
//      of 256 (first the cached prefix, then the new tokens; a tile never mixes the two):
//        - invocation j scores key j of the tile: s_j = scale * dot(q, k_j) (fp32);
//        - shared-memory tree reductions give the tile's max and, after p_j = exp(s_j - m_new),
//          the sum of p_j; the running max m and running sum l are rescaled by exp(m - m_new);
//        - invocation i owns output dims i, i + 256, i + 512, i + 768 (head_dim <= 1024) and
//          accumulates acc = acc * exp(m - m_new) + sum_j p_j v_j[dim] in fp32.
//      Finally out = acc / l, rounded to q's dtype; F16 rows are stored by whole words
//      (common.glsl's convention, atomics on the halves a row shares with its neighbours).
// Offsets (the binding remainders) are in elements of each operand's dtype and packed 8 bits
// each (minStorageBufferOffsetAlignment <= 256 bytes); strides are in elements.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "paged_kv.glsl"

layout(local_size_x = HWINFER_WORKGROUP_SIZE) in;

layout(std430, binding = 0) readonly buffer Q { uint q_[]; };
layout(std430, binding = 1) readonly buffer K { uint k_[]; };
layout(std430, binding = 2) readonly buffer V { uint v_[]; };
layout(std430, binding = 3) buffer Out { uint out_[]; };
layout(std430, binding = 4) readonly buffer QueryStart { int query_start[]; };
layout(std430, binding = 5) readonly buffer KCache { uint k_cache[]; };
layout(std430, binding = 6) readonly buffer VCache { uint v_cache[]; };
layout(std430, binding = 7) readonly buffer KScales { float k_scales[]; };
layout(std430, binding = 8) readonly buffer VScales { float v_scales[]; };
layout(std430, binding = 9) readonly buffer BlockTables { int block_tables[]; };
layout(std430, binding = 10) readonly buffer ContextLens { int context_lens[]; };
layout(std430, binding = 11) coherent buffer Error { uint error[]; };

// 32 words = 128 bytes, the most a pipeline may rely on.
layout(push_constant) uniform Params {
  uint n_tokens, n_seqs;
  uint heads;  // n_heads | group << 16 (group = n_heads / n_kv_heads)
  uint dims;   // head_dim | block_size << 16
  uint max_blocks, num_blocks;
  float scale;
  // 8-bit element remainders: offsets0 = q | k << 8 | v << 16 | out << 24;
  // offsets1 = query_start | k_cache << 8 | v_cache << 16 | k_scales << 24;
  // offsets2 = v_scales | block_tables << 8 | context_lens << 16 | flags << 24.
  uint offsets0, offsets1, offsets2;
  uint q_token_stride, q_head_stride;
  uint k_token_stride, k_head_stride;
  uint v_token_stride, v_head_stride;
  uint out_token_stride, out_head_stride;
  uint qs_stride;
  uint kc_block_stride, kc_row_stride, kc_head_stride;
  uint vc_block_stride, vc_row_stride, vc_head_stride;
  uint ks_block_stride, ks_head_stride;
  uint vs_block_stride, vs_head_stride;
  uint bt_row_stride, bt_col_stride;
  uint cl_stride;
} p;

// Flags (offsets2 >> 24); kernels_attention_prefill.cpp sets the same bits.
const uint FLAG_CAUSAL = 1u;
const uint FLAG_Q_F16 = 2u;
const uint FLAG_K_F16 = 4u;
const uint FLAG_V_F16 = 8u;
const uint FLAG_HAS_PREFIX = 16u;
const uint FLAG_K_I8 = 32u;
const uint FLAG_V_I8 = 64u;
const uint FLAG_VALIDATE = 128u;

const uint MAX_HEAD_DIM = 4u * HWINFER_WORKGROUP_SIZE;
const uint TILE = HWINFER_WORKGROUP_SIZE;  // keys per tile
const float NO_SCORE = -3.0e38;            // below every finite score, exp(NO_SCORE - m) == 0

shared float s_q[MAX_HEAD_DIM];
shared float s_out[MAX_HEAD_DIM];
shared float s_red[HWINFER_WORKGROUP_SIZE];
shared float s_p[TILE];
shared uint s_vbase[TILE];
shared float s_vscale[TILE];

HWINFER_DEFINE_LOAD(load_q, q_)
HWINFER_DEFINE_LOAD(load_k, k_)
HWINFER_DEFINE_LOAD(load_v, v_)
HWINFER_DEFINE_POOL_LOAD(load_kc, k_cache)
HWINFER_DEFINE_POOL_LOAD(load_vc, v_cache)
HWINFER_DEFINE_STORE_HALF_WORD(store_out_word, out_)

uint flags() { return p.offsets2 >> 24u; }
bool flag(uint bit) { return (flags() & bit) != 0u; }
uint byte_of(uint word, uint i) { return (word >> (8u * i)) & 0xFFu; }

uint n_heads() { return p.heads & 0xFFFFu; }
uint group() { return p.heads >> 16u; }
uint head_dim() { return p.dims & 0xFFFFu; }
uint block_size() { return p.dims >> 16u; }

int qs_at(uint s) { return query_start[byte_of(p.offsets1, 0u) + s * p.qs_stride]; }
int context_len(uint s) { return context_lens[byte_of(p.offsets2, 2u) + s * p.cl_stride]; }
int block_id(uint s, uint index) {
  return block_tables[byte_of(p.offsets2, 1u) + s * p.bt_row_stride + index * p.bt_col_stride];
}

// ---- pass 1: validation ---------------------------------------------------------------------

void validate() {
  const uint lid = gl_LocalInvocationID.x;
  for (uint s = gl_WorkGroupID.x; s <= p.n_seqs; s += gl_NumWorkGroups.x) {
    bool bad = false;
    if (lid == 0u) {
      const int start = qs_at(s);
      if (s == 0u) {
        bad = start != 0;
      } else {
        bad = start < qs_at(s - 1u) || start > int(p.n_tokens);
      }
      if (s == p.n_seqs && start != int(p.n_tokens)) bad = true;
    }
    if (flag(FLAG_HAS_PREFIX) && s < p.n_seqs) {
      const int len = context_len(s);  // every invocation reads it: the loop below is uniform
      const int capacity = int(p.max_blocks * block_size());  // fits an I32 (checked on the host)
      if (len < 0 || len > capacity) {
        if (lid == 0u) bad = true;
      } else {
        const uint used = (uint(len) + block_size() - 1u) / block_size();
        for (uint b = lid; b < used; b += HWINFER_WORKGROUP_SIZE) {
          const int id = block_id(s, b);
          if (id < 0 || id >= int(p.num_blocks)) bad = true;
        }
      }
    }
    if (bad) atomicOr(error[0], 1u);
  }
}

// ---- pass 2: attention ----------------------------------------------------------------------

// The sequence owning token t: the last s < n_seqs with query_start[s] <= t (query_start is
// validated: it rises from 0 to n_tokens > t).
uint sequence_of(uint t) {
  uint lo = 0u;
  uint hi = p.n_seqs;
  while (hi - lo > 1u) {
    const uint mid = (lo + hi) / 2u;
    if (qs_at(mid) <= int(t)) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Tree reductions over s_red (every invocation calls them; the result is returned to all).
float reduce_max(float x) {
  const uint lid = gl_LocalInvocationID.x;
  s_red[lid] = x;
  barrier();
  for (uint half_ = HWINFER_WORKGROUP_SIZE / 2u; half_ > 0u; half_ >>= 1u) {
    if (lid < half_) s_red[lid] = max(s_red[lid], s_red[lid + half_]);
    barrier();
  }
  const float result = s_red[0];
  barrier();  // everyone has read s_red[0] before it is reused
  return result;
}

float reduce_sum(float x) {
  const uint lid = gl_LocalInvocationID.x;
  s_red[lid] = x;
  barrier();
  for (uint half_ = HWINFER_WORKGROUP_SIZE / 2u; half_ > 0u; half_ >>= 1u) {
    if (lid < half_) s_red[lid] += s_red[lid + half_];
    barrier();
  }
  const float result = s_red[0];
  barrier();
  return result;
}

// The online-softmax state of one (query, head) item; acc[i] is dim lid + i * 256.
float m_run;
float l_run;
float acc[4];

// One tile of |n| (1..TILE) keys starting at key |first| of the cached prefix (cached) or of the
// sequence's new tokens (starting at token |seq_begin|), for sequence |s| and KV head |kvh|.
void process_tile(bool cached, uint first, uint n, uint s, uint seq_begin, uint kvh) {
  const uint lid = gl_LocalInvocationID.x;
  const uint dim = head_dim();
  float score = NO_SCORE;
  if (lid < n) {
    const uint key = first + lid;
    float dot_ = 0.0;
    if (cached) {
      const uint block = uint(block_id(s, key / block_size()));
      const uint row = key % block_size();
      float k_scale = 0.0;
      float v_scale = 0.0;
      if (flag(FLAG_K_I8)) {
        k_scale = k_scales[byte_of(p.offsets1, 3u) + block * p.ks_block_stride +
                           kvh * p.ks_head_stride];
      }
      if (flag(FLAG_V_I8)) {
        v_scale = v_scales[byte_of(p.offsets2, 0u) + block * p.vs_block_stride +
                           kvh * p.vs_head_stride];
      }
      const uint k_base = byte_of(p.offsets1, 1u) + block * p.kc_block_stride +
                          row * p.kc_row_stride + kvh * p.kc_head_stride;
      const bool k_i8 = flag(FLAG_K_I8);
      for (uint d = 0u; d < dim; ++d) dot_ += s_q[d] * load_kc(k_i8, k_base + d, k_scale);
      s_vbase[lid] = byte_of(p.offsets1, 2u) + block * p.vc_block_stride + row * p.vc_row_stride +
                     kvh * p.vc_head_stride;
      s_vscale[lid] = v_scale;
    } else {
      const uint token = seq_begin + key;
      const uint k_base =
          byte_of(p.offsets0, 1u) + token * p.k_token_stride + kvh * p.k_head_stride;
      const bool k_f16 = flag(FLAG_K_F16);
      for (uint d = 0u; d < dim; ++d) dot_ += s_q[d] * load_k(k_f16, k_base + d);
      s_vbase[lid] = byte_of(p.offsets0, 2u) + token * p.v_token_stride + kvh * p.v_head_stride;
      s_vscale[lid] = 0.0;
    }
    score = p.scale * dot_;
  }
  const float m_new = max(m_run, reduce_max(score));
  const float alpha = m_run == NO_SCORE ? 0.0 : exp(m_run - m_new);
  const float weight = lid < n ? exp(score - m_new) : 0.0;
  s_p[lid] = weight;  // s_vbase/s_vscale too are visible after reduce_sum's barriers
  l_run = l_run * alpha + reduce_sum(weight);
  m_run = m_new;
  const bool v_f16 = flag(FLAG_V_F16);
  const bool v_i8 = flag(FLAG_V_I8);
  for (uint i = 0u; i < 4u; ++i) {
    const uint d = lid + i * HWINFER_WORKGROUP_SIZE;
    if (d >= dim) break;
    float a = acc[i] * alpha;
    if (cached) {
      for (uint j = 0u; j < n; ++j) a += s_p[j] * load_vc(v_i8, s_vbase[j] + d, s_vscale[j]);
    } else {
      for (uint j = 0u; j < n; ++j) a += s_p[j] * load_v(v_f16, s_vbase[j] + d);
    }
    acc[i] = a;
  }
  barrier();  // s_p, s_vbase and s_vscale are read before the next tile writes them
}

void attend() {
  if (error[0] != 0u) return;  // bad query_start / context_lens / block ids: nothing is written
  const uint lid = gl_LocalInvocationID.x;
  const uint dim = head_dim();
  const bool q_f16 = flag(FLAG_Q_F16);
  const uint items = p.n_tokens * n_heads();
  for (uint item = gl_WorkGroupID.x; item < items; item += gl_NumWorkGroups.x) {
    const uint t = item / n_heads();
    const uint h = item % n_heads();
    const uint kvh = h / group();
    const uint s = sequence_of(t);
    const uint seq_begin = uint(qs_at(s));
    const uint seq_end = uint(qs_at(s + 1u));
    const uint q_base = byte_of(p.offsets0, 0u) + t * p.q_token_stride + h * p.q_head_stride;
    for (uint d = lid; d < dim; d += HWINFER_WORKGROUP_SIZE) s_q[d] = load_q(q_f16, q_base + d);
    barrier();
    m_run = NO_SCORE;
    l_run = 0.0;
    for (uint i = 0u; i < 4u; ++i) acc[i] = 0.0;
    const uint n_cached = flag(FLAG_HAS_PREFIX) ? uint(context_len(s)) : 0u;
    for (uint first = 0u; first < n_cached; first += TILE) {
      process_tile(true, first, min(TILE, n_cached - first), s, seq_begin, kvh);
    }
    const uint n_new = flag(FLAG_CAUSAL) ? t - seq_begin + 1u : seq_end - seq_begin;
    for (uint first = 0u; first < n_new; first += TILE) {
      process_tile(false, first, min(TILE, n_new - first), s, seq_begin, kvh);
    }
    // Every query sees at least itself, so l_run > 0.
    const float inv_l = 1.0 / l_run;
    for (uint i = 0u; i < 4u; ++i) {
      const uint d = lid + i * HWINFER_WORKGROUP_SIZE;
      if (d < dim) s_out[d] = acc[i] * inv_l;
    }
    barrier();
    const uint o_row = byte_of(p.offsets0, 3u) + t * p.out_token_stride + h * p.out_head_stride;
    const uint units = hwinfer_units(q_f16, o_row, dim);
    for (uint u = lid; u < units; u += HWINFER_WORKGROUP_SIZE) {
      const uvec2 e = hwinfer_unit_elements(q_f16, o_row, dim, u);
      const bool has_lo = e.x < dim;
      const bool has_hi = e.y < dim;
      const float lo = has_lo ? s_out[e.x] : 0.0;
      const float hi = has_hi ? s_out[e.y] : 0.0;
      if (q_f16) {
        store_out_word(o_row / 2u + u, has_lo, lo, has_hi, hi);
      } else {
        out_[o_row + u] = floatBitsToUint(lo);
      }
    }
    barrier();  // s_q and s_out are read before the next item writes them
  }
}

void main() {
  if (flag(FLAG_VALIDATE)) {
    validate();
  } else {
    attend();
  }
}
