#version 450
// probe_read.comp — one READ pass of the bandwidth probe: every 32-bit word that overlaps the
// src view is read once and folded into 16 XOR accumulators (scratch), so the reads cannot be
// optimised away. Bytes outside the view but inside its edge words are read too (never written).
//   src: the view's words, from word first_word on (binding at the aligned-down offset)
//   scratch: [16] uint, zeroed by the host before the first pass
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = HWINFER_WORKGROUP_SIZE) in;

layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) buffer Scratch { uint scratch[]; };

layout(push_constant) uniform Params {
  uint first_word;  // the remainder of the view's offset, in whole words (rounded down)
  uint n_words;     // words overlapping [offset, offset + size_bytes)
  uint pass;        // iteration index, mixed in so passes differ
} p;

void main() {
  uint acc = p.pass;
  const uint stride = gl_NumWorkGroups.x * HWINFER_WORKGROUP_SIZE;
  for (uint w = gl_GlobalInvocationID.x; w < p.n_words; w += stride) {
    acc = (acc ^ src[p.first_word + w]) * 16777619u;
  }
  atomicXor(scratch[gl_LocalInvocationID.x % 16u], acc);
}
