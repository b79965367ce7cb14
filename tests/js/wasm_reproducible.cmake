# wasm_world_reproducible: the module rebuilt from a copy of its sources in another folder must be
# the same bytes as the one the build wrote (docs/wasm.md "Reproducible"). Run by ctest as
#   cmake -DARGS=<file setting cc, flags, includes, sources, root, module> -DWORK=<dir> -P this
include(${ARGS})
file(REMOVE_RECURSE ${WORK})
set(copy ${WORK}/elsewhere/collide)
foreach(dir server/geom server/world server/journal server/wasm common)
  file(COPY ${root}/${dir}/ DESTINATION ${copy}/${dir})
endforeach()
set(cmd ${cc} ${flags} ${includes} ${sources})
string(REPLACE "${root}" "${copy}" cmd "${cmd}")
execute_process(COMMAND ${cmd} -o ${WORK}/again.wasm WORKING_DIRECTORY ${WORK}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "rebuilding the module failed: ${err}")
endif()
file(SHA256 ${module} want)
file(SHA256 ${WORK}/again.wasm got)
if(NOT want STREQUAL got)
  message(FATAL_ERROR "the module rebuilt from ${copy} differs: ${got}, the build's ${want}")
endif()
message(STATUS "the same bytes from another folder: sha256 ${got}")
