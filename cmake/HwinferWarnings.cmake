# Warning and sanitizer flags, applied per target with hwinfer_set_warnings(target).
function(hwinfer_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                            -Wno-sign-conversion)
  if(HWINFER_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

if(HWINFER_SANITIZE)
  add_compile_options(-fsanitize=${HWINFER_SANITIZE} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${HWINFER_SANITIZE})
endif()
