# Re-runs tests/fixtures/tiled/make.sh on a copy of the fixtures and compares the result with the
# committed files: a difference means Tiled (or make.sh) now writes something else. -DFIXTURES=
# the committed directory, -DWORK= a scratch directory.
file(REMOVE_RECURSE ${WORK})
file(COPY ${FIXTURES}/ DESTINATION ${WORK})
execute_process(COMMAND ${WORK}/make.sh RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make.sh failed (${rc})")
endif()
execute_process(COMMAND diff -r ${FIXTURES} ${WORK} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the regenerated fixtures differ from the committed ones (above)")
endif()
