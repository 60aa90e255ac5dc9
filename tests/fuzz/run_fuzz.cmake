# Runs one libFuzzer target for a while, as the test fuzz_<name>_fuzz.
#
#   cmake -DFUZZER=path -DSEEDS=dir -DWORK=dir -DSECONDS=n [-DOPTIONS=...] -P run_fuzz.cmake
#
# The seeds are copied into WORK/corpus, which libFuzzer grows with every
# input that finds new coverage; it is kept between runs, so each run goes on
# from the last. Crash inputs land in WORK. The test fails when the fuzzer
# does, that is, when it found a crash, a leak, a timeout or ran out of memory.

foreach (variable FUZZER SEEDS WORK SECONDS)
    if (NOT DEFINED ${variable})
        message (FATAL_ERROR "run_fuzz.cmake needs -D${variable}=...")
    endif ()
endforeach ()

file (MAKE_DIRECTORY ${WORK}/corpus)
file (COPY ${SEEDS}/ DESTINATION ${WORK}/corpus)

execute_process (
    COMMAND ${FUZZER} -max_total_time=${SECONDS} -rss_limit_mb=2048 -print_final_stats=1
            -artifact_prefix=${WORK}/ ${OPTIONS} ${WORK}/corpus
    WORKING_DIRECTORY ${WORK}
    RESULT_VARIABLE result)
if (NOT result EQUAL 0)
    message (FATAL_ERROR "${FUZZER} failed (${result}); its input is in ${WORK}")
endif ()
