# cmake -P script run after a GoogleTest executable links (hwinfer_discover_tests, sanitizer
# builds): writes CTEST_FILE with one ctest per test suite of TEST_EXECUTABLE, each running
# --gtest_filter=Suite.* in WORKING_DIRECTORY, named PREFIX + Suite, labelled LABELS.
execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
  WORKING_DIRECTORY "${WORKING_DIRECTORY}" TIMEOUT 60
  OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${result}): ${errors}")
endif()
string(REPLACE ";" "," listing "${listing}")  # a parameter's text must not split the lines
string(REPLACE "\n" ";" lines "${listing}")
set(script "")
set(count 0)
foreach(line IN LISTS lines)
  # A suite line: "Suite." or "Prefix/Suite.  # TypeParam = int"; its tests follow, indented.
  if(line MATCHES "^([^ #][^ ]*)\\.( .*)?$")
    set(name "${PREFIX}${CMAKE_MATCH_1}")
    string(APPEND script
      "add_test([==[${name}]==] [==[${TEST_EXECUTABLE}]==] [==[--gtest_filter=${CMAKE_MATCH_1}.*]==])\n"
      "set_tests_properties([==[${name}]==] PROPERTIES WORKING_DIRECTORY [==[${WORKING_DIRECTORY}]==]")
    if(LABELS)
      string(APPEND script " LABELS [==[${LABELS}]==]")
    endif()
    string(APPEND script ")\n")
    math(EXPR count "${count} + 1")
  endif()
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests listed no test suite:\n${listing}")
endif()
file(WRITE "${CTEST_FILE}" "${script}")
