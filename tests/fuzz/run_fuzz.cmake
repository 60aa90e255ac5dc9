# Runs one libFuzzer target for a while, as the test fuzz_<name>_fuzz.
#
#   cmake -DFUZZER=path -DSEEDS=dir -DWORK=dir -DSECONDS=n [-DMAX_LEN=bytes]
#         [-DOPTIONS=...] -P run_fuzz.cmake
#
# The seeds are copied into WORK/corpus, which libFuzzer grows with every
# input that finds new coverage; it is kept between runs, so each run goes on
# from the last. Crash inputs land in WORK. The test fails when the fuzzer
# does, that is, when it found a crash, a leak, a timeout or ran out of memory.
#
# MAX_LEN raises libFuzzer's limit on the inputs it makes, 4096 bytes unless
# told, for targets whose inputs go beyond that. When the environment
# variable CI is "true", the fuzzer runs with a fixed seed, so that a CI run
# is reproducible and a latent bug the fuzzer happens upon cannot fail an
# unrelated change at random; elsewhere each run draws its own seed.

foreach (variable FUZZER SEEDS WORK SECONDS)
    if (NOT DEFINED ${variable})
        message (FATAL_ERROR "run_fuzz.cmake needs -D${variable}=...")
    endif ()
endforeach ()

set (options ${OPTIONS})
if (DEFINED MAX_LEN)
    list (APPEND options -max_len=${MAX_LEN})
endif ()
if ("$ENV{CI}" STREQUAL "true")
    list (APPEND options -seed=1)
endif ()

file (MAKE_DIRECTORY ${WORK}/corpus)
file (COPY ${SEEDS}/ DESTINATION ${WORK}/corpus)

execute_process (
    COMMAND ${FUZZER} -max_total_time=${SECONDS} -rss_limit_mb=2048 -print_final_stats=1
            -artifact_prefix=${WORK}/ ${options} ${WORK}/corpus
    WORKING_DIRECTORY ${WORK}
    RESULT_VARIABLE result)
if (NOT result EQUAL 0)
    message (FATAL_ERROR "${FUZZER} failed (${result}); its input is in ${WORK}")
endif ()
