# run_fuzz.cmake — CTest driver for gguf_fuzz_bounded: copies the checked-in seed corpus to a
# scratch folder (libFuzzer adds new inputs to its corpus folder; the source tree must stay
# untouched) and runs a bounded number of iterations. Fails when the fuzzer finds a crash, or an
# input makes one allocation larger than 512 MiB (the seeds are at most a few KiB: anything that
# large was sized by a number in the file before it was checked).
# Usage: cmake -DFUZZER=... -DCORPUS=... -DWORK_DIR=... -P run_fuzz.cmake
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
file(COPY ${CORPUS}/ DESTINATION ${WORK_DIR}/corpus)
execute_process(
  COMMAND ${FUZZER} -runs=20000 -max_len=65536 -seed=1 -rss_limit_mb=2048 -malloc_limit_mb=512
          -artifact_prefix=${WORK_DIR}/ ${WORK_DIR}/corpus
  WORKING_DIRECTORY ${WORK_DIR}
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "gguf_fuzz failed (exit ${result}); the crashing input is in ${WORK_DIR}")
endif()
