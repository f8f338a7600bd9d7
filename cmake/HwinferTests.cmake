# hwinfer_discover_tests(TARGET [PREFIX P] [LABELS L]): registers a GoogleTest executable's tests
# with ctest. The plain build gets one ctest per test (gtest_discover_tests). A sanitizer build gets
# one per test suite (--gtest_filter=Suite.*): an ASan+UBSan process costs ~0.3-0.4 s to start and
# end on 2 cores (relocations, registering the instrumented globals, the leak scan, and the page
# faults of all three), against ~25 ms in the plain build, and the unit tests alone are 577 tests
# in 95 suites. Suites are listed after the executable links (cmake/GtestSuites.cmake), as
# gtest_discover_tests lists tests.
include(GoogleTest)

function(hwinfer_discover_tests target)
  cmake_parse_arguments(arg "" "PREFIX;LABELS" "" ${ARGN})
  if(NOT HWINFER_SANITIZE)
    set(properties)
    if(arg_LABELS)
      set(properties PROPERTIES LABELS "${arg_LABELS}")
    endif()
    gtest_discover_tests(${target} TEST_PREFIX "${arg_PREFIX}" DISCOVERY_TIMEOUT 60 ${properties})
    return()
  endif()
  set(ctest_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake")
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites_include.cmake")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -D "TEST_EXECUTABLE=$<TARGET_FILE:${target}>"
            -D "WORKING_DIRECTORY=${CMAKE_CURRENT_BINARY_DIR}" -D "PREFIX=${arg_PREFIX}"
            -D "LABELS=${arg_LABELS}" -D "CTEST_FILE=${ctest_file}"
            -P ${PROJECT_SOURCE_DIR}/cmake/GtestSuites.cmake
    COMMENT "Listing the test suites of ${target}"
    VERBATIM)
  file(WRITE "${include_file}"
    "if(EXISTS \"${ctest_file}\")\n"
    "  include(\"${ctest_file}\")\n"
    "else()\n"
    "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
