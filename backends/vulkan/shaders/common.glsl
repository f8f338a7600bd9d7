// common.glsl — what every hwinfer compute shader shares (the dispatch convention of
// ../dispatch.h): each operand is a storage buffer bound at its view's offset rounded DOWN to the
// device's minStorageBufferOffsetAlignment; the remainder (in elements), the shapes and the
// strides (in elements) arrive in push constants. Rows are walked with a stride of
// gl_NumWorkGroups so any row count fits the device's workgroup-count limit.
#ifndef HWINFER_COMMON_GLSL_
#define HWINFER_COMMON_GLSL_

#define HWINFER_WORKGROUP_SIZE 256

#endif
