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
  # Executables link without PIE: an ASan+UBSan PIE carries a relative relocation per
  # instrumented global and check site (hwinfer_unit_tests: 1.1M, 27 MB), applied at every start;
  # each test is a process of its own (0.45 s a start with PIE, 0.32 s without, on 2 cores).
  string(APPEND CMAKE_EXE_LINKER_FLAGS " -no-pie")
endif()

# A test executable's own code (fixtures, assertions, expected values) compiles at -O0 under the
# sanitizers: still sanitized, and 2.3x faster to compile there (metrics_test.cpp: 14 s against
# 32 s at -O1); the code under test, in the libraries and plugins it links, keeps -O1.
function(hwinfer_sanitized_test_code target)
  if(HWINFER_SANITIZE)
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:C,CXX>:-O0>")
  endif()
endfunction()
