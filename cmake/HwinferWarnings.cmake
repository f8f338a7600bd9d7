# Warning and sanitizer flags, applied per target with hwinfer_set_warnings(target).
# C and C++ only: the GPU plugins' kernel files are compiled by nvcc or hipcc, which take other
# flags (backends/cuda, backends/hip).
set(HWINFER_WARNING_FLAGS -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
if(HWINFER_WARNINGS_AS_ERRORS)
  list(APPEND HWINFER_WARNING_FLAGS -Werror)
endif()

function(hwinfer_set_warnings target)
  target_compile_options(${target} PRIVATE
    "$<$<COMPILE_LANGUAGE:C,CXX>:${HWINFER_WARNING_FLAGS}>")
endfunction()

if(HWINFER_SANITIZE)
  add_compile_options(
    "$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=${HWINFER_SANITIZE};-fno-omit-frame-pointer;-fno-sanitize-recover=all>")
  add_link_options(-fsanitize=${HWINFER_SANITIZE})
endif()
